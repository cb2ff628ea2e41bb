#!/usr/bin/env python3
"""Tests of tools/amalgamate.py, each on a temporary copy of a tiny include tree.

The script finds its tree from its own location (tools/ beside include/ and LICENSE), so
each test copies it into a fresh directory with a two-header tree and runs it there: the
real include/ is never read, and each behaviour can fail on its own.
Run by ctest as amalgamate_py_tests; stdlib only.
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parent.parent.parent / "tools" / "amalgamate.py"

TREE = {
    "LICENSE": "Tiny license.\n",
    "include/skiff/version.hpp": ("#define SKIFF_VERSION_MAJOR 1\n#define SKIFF_VERSION_MINOR 2\n"
                                  "#define SKIFF_VERSION_PATCH 3\n"),
    "include/skiff/skiff.hpp": '#include "skiff/version.hpp"\n#include "skiff/part/a.hpp"\n',
    "include/skiff/part/a.hpp": "inline int a() { return 1; }\n",
}


class AmalgamateTest(unittest.TestCase):
    def setUp(self):
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="skiff-amalgamate-"))
        self.addCleanup(shutil.rmtree, self.root)
        for name, text in TREE.items():
            self.write(name, text)
        (self.root / "tools").mkdir()
        shutil.copy(SCRIPT, self.root / "tools" / "amalgamate.py")

    def write(self, name, text):
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def run_script(self, *args):
        return subprocess.run([sys.executable, str(self.root / "tools" / "amalgamate.py"), *args],
                              cwd=self.root, capture_output=True, text=True)

    def test_generates_the_tiny_tree(self):
        # The control for the tests below: the copied tree itself is fine.
        result = self.run_script()
        self.assertEqual(result.returncode, 0, result.stderr)
        text = (self.root / "single_include" / "skiff" / "skiff.hpp").read_text()
        self.assertIn("// begin skiff/part/a.hpp", text)
        self.assertIn("skiff v1.2.3", text)
        self.assertEqual(self.run_script("--check").returncode, 0)

    def test_check_with_output_names_the_file_it_checked(self):
        self.assertEqual(self.run_script("--output", "out/other.hpp").returncode, 0)
        self.write("out/other.hpp", "stale\n")
        result = self.run_script("--check", "--output", "out/other.hpp")
        self.assertEqual(result.returncode, 1)
        self.assertIn("out/other.hpp is stale", result.stderr)
        self.assertIn("--output out/other.hpp", result.stderr)  # the command that regenerates it
        self.assertNotIn("single_include", result.stderr)

    def test_check_without_output_names_the_committed_file(self):
        self.write("single_include/skiff/skiff.hpp", "stale\n")
        result = self.run_script("--check")
        self.assertEqual(result.returncode, 1)
        self.assertIn("single_include/skiff/skiff.hpp is stale: run: python3 tools/amalgamate.py\n", result.stderr)

    def test_a_header_the_umbrella_does_not_reach_fails_generation_by_name(self):
        self.write("include/skiff/part/orphan.hpp", "inline int orphan() { return 2; }\n")
        result = self.run_script()
        self.assertEqual(result.returncode, 2)
        self.assertIn("include/skiff/part/orphan.hpp", result.stderr)
        self.assertNotIn("part/a.hpp", result.stderr)  # reached: not named
        self.assertFalse((self.root / "single_include").exists(), "nothing written on failure")
        self.assertEqual(self.run_script("--check").returncode, 2)

    def test_a_header_reached_through_a_part_counts_as_reached(self):
        self.write("include/skiff/part/a.hpp", '#include "skiff/part/b.hpp"\ninline int a() { return 1; }\n')
        self.write("include/skiff/part/b.hpp", "inline int b() { return 2; }\n")
        result = self.run_script()
        self.assertEqual(result.returncode, 0, result.stderr)


if __name__ == "__main__":
    unittest.main()
