#!/usr/bin/env python3
"""Tests of tools/amalgamate.py, each on a temporary copy of a tiny include tree.

The script finds its tree from its own location (tools/ beside include/ and LICENSE), so
each test copies it into a fresh directory with a tiny tree (the three roots skiff.hpp,
testing.hpp and fwd.hpp, a part and a testing part) and runs it there: the real include/ is
never read, and each behaviour can fail on its own.
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
    "include/skiff/skiff.hpp": '#include "skiff/version.hpp"\n#include "skiff/fwd.hpp"\n#include "skiff/part/a.hpp"\n',
    "include/skiff/part/a.hpp": "inline int a() { return 1; }\n",
    "include/skiff/fwd.hpp": "int a();\n",
    "include/skiff/testing.hpp": '#include "skiff/skiff.hpp"\n#include "skiff/testing/t.hpp"\n',
    "include/skiff/testing/t.hpp": '#include "skiff/part/a.hpp"\ninline int t() { return a(); }\n',
}
OUTPUTS = ("skiff.hpp", "testing.hpp", "fwd.hpp")


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

    def hold_back(self, room):
        """Puts `room` into the copied script's NOT_YET table (the real one is empty once every
        room is in the umbrella)."""
        script = self.root / "tools" / "amalgamate.py"
        text = script.read_text()
        self.assertIn("NOT_YET = {\n", text)
        script.write_text(text.replace("NOT_YET = {\n", f'NOT_YET = {{\n    "{room}": "held back by a test",\n', 1))

    def run_script(self, *args):
        return subprocess.run([sys.executable, str(self.root / "tools" / "amalgamate.py"), *args],
                              cwd=self.root, capture_output=True, text=True)

    def test_generates_the_tiny_tree(self):
        # The control for the tests below: the copied tree itself is fine.
        result = self.run_script()
        self.assertEqual(result.returncode, 0, result.stderr)
        text = (self.root / "single_include" / "skiff" / "skiff.hpp").read_text()
        self.assertIn("// begin skiff/part/a.hpp", text)
        self.assertIn("// begin skiff/fwd.hpp", text)  # self-contained: declarations inlined
        self.assertNotIn("skiff/testing", text)
        self.assertIn("skiff v1.2.3", text)
        self.assertEqual(self.run_script("--check").returncode, 0)

    def test_testing_includes_its_sibling_and_inlines_only_its_own_parts(self):
        self.assertEqual(self.run_script().returncode, 0)
        text = (self.root / "single_include" / "skiff" / "testing.hpp").read_text()
        self.assertIn('#include "skiff.hpp"', text)
        self.assertIn("// begin skiff/testing/t.hpp", text)
        self.assertNotIn("// begin skiff/part/a.hpp", text)  # skiff.hpp holds it
        self.assertNotIn("skiff/part/a.hpp\"", text)       # nor is it included by its part name
        fwd = (self.root / "single_include" / "skiff" / "fwd.hpp").read_text()
        self.assertIn("int a();", fwd)
        self.assertNotIn("inline int a()", fwd)

    def test_output_is_deterministic(self):
        self.assertEqual(self.run_script().returncode, 0)
        first = {n: (self.root / "single_include" / "skiff" / n).read_bytes() for n in OUTPUTS}
        self.assertEqual(self.run_script().returncode, 0)
        second = {n: (self.root / "single_include" / "skiff" / n).read_bytes() for n in OUTPUTS}
        self.assertEqual(first, second)

    def test_check_with_output_names_the_file_it_checked(self):
        self.assertEqual(self.run_script("--output", "out").returncode, 0)
        self.assertEqual(sorted(p.name for p in (self.root / "out").iterdir()), sorted(OUTPUTS))
        self.write("out/testing.hpp", "stale\n")
        result = self.run_script("--check", "--output", "out")
        self.assertEqual(result.returncode, 1)
        self.assertIn("out/testing.hpp is stale", result.stderr)
        self.assertIn("--output out", result.stderr)  # the command that regenerates it
        self.assertNotIn("single_include", result.stderr)
        self.assertNotIn("skiff.hpp is stale", result.stderr)  # only the stale one is named

    def test_check_without_output_names_the_committed_file(self):
        self.assertEqual(self.run_script().returncode, 0)
        for name in OUTPUTS:
            with self.subTest(name=name):
                path = self.root / "single_include" / "skiff" / name
                good = path.read_text()
                self.write("single_include/skiff/" + name, "stale\n")
                result = self.run_script("--check")
                self.assertEqual(result.returncode, 1)
                self.assertIn(f"single_include/skiff/{name} is stale: run: python3 tools/amalgamate.py\n",
                              result.stderr)
                path.write_text(good)
        self.assertEqual(self.run_script("--check").returncode, 0)

    def test_a_header_the_umbrella_does_not_reach_fails_generation_by_name(self):
        self.write("include/skiff/part/orphan.hpp", "inline int orphan() { return 2; }\n")
        result = self.run_script()
        self.assertEqual(result.returncode, 2)
        self.assertIn("include/skiff/part/orphan.hpp", result.stderr)
        self.assertNotIn("part/a.hpp", result.stderr)  # reached: not named
        self.assertFalse((self.root / "single_include").exists(), "nothing written on failure")
        self.assertEqual(self.run_script("--check").returncode, 2)

    def test_a_room_not_yet_in_the_single_headers_is_left_out_without_failing(self):
        self.hold_back("skiff/later/")
        self.write("include/skiff/later/w.hpp", "inline int w() { return 4; }\n")
        result = self.run_script()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("later", (self.root / "single_include" / "skiff" / "skiff.hpp").read_text())

    def test_a_root_that_reaches_a_room_not_yet_in_fails_by_name(self):
        self.hold_back("skiff/later/")
        self.write("include/skiff/later/w.hpp", "inline int w() { return 4; }\n")
        self.write("include/skiff/part/a.hpp", '#include "skiff/later/w.hpp"\ninline int a() { return 1; }\n')
        result = self.run_script()
        self.assertEqual(result.returncode, 2)
        self.assertIn("include/skiff/later/w.hpp", result.stderr)
        self.assertIn("NOT_YET", result.stderr)

    def test_a_header_only_the_test_client_reaches_counts_as_reached(self):
        self.write("include/skiff/testing/u.hpp", "inline int u() { return 3; }\n")
        self.write("include/skiff/testing.hpp",
                   '#include "skiff/skiff.hpp"\n#include "skiff/testing/t.hpp"\n#include "skiff/testing/u.hpp"\n')
        result = self.run_script()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("testing/u.hpp", (self.root / "single_include" / "skiff" / "skiff.hpp").read_text())

    def test_a_missing_root_fails_generation(self):
        (self.root / "include" / "skiff" / "fwd.hpp").unlink()
        self.write("include/skiff/skiff.hpp", '#include "skiff/version.hpp"\n#include "skiff/part/a.hpp"\n')
        result = self.run_script()
        self.assertEqual(result.returncode, 2)
        self.assertIn("skiff/fwd.hpp", result.stderr)

    def test_a_header_reached_through_a_part_counts_as_reached(self):
        self.write("include/skiff/part/a.hpp", '#include "skiff/part/b.hpp"\ninline int a() { return 1; }\n')
        self.write("include/skiff/part/b.hpp", "inline int b() { return 2; }\n")
        result = self.run_script()
        self.assertEqual(result.returncode, 0, result.stderr)


if __name__ == "__main__":
    unittest.main()
