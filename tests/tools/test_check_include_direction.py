#!/usr/bin/env python3
"""Self-test of tools/check_include_direction.py: the script run over a copy of include/ with
one defect planted at a time must fail, naming it; the copy as it is must pass. Run by ctest
as check_include_direction_self_test; stdlib only.
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "tools" / "check_include_direction.py"


class PlantedDefects(unittest.TestCase):
    def setUp(self):
        self.dir = pathlib.Path(tempfile.mkdtemp())
        shutil.copytree(ROOT / "include" / "skiff", self.dir / "skiff")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_check(self):
        r = subprocess.run([sys.executable, str(SCRIPT), "--root", str(self.dir)],
                           capture_output=True, text=True)
        return r.returncode, r.stdout

    def edit(self, rel, fn):
        path = self.dir / "skiff" / rel
        path.write_text(fn(path.read_text()))

    def test_the_tree_as_it_is_passes(self):
        code, out = self.run_check()
        self.assertEqual(code, 0, out)

    def test_an_engine_file_that_includes_a_feature_fails(self):
        self.edit("engine/session.hpp", lambda t: t.replace(
            '#include "skiff/engine/writer.hpp"',
            '#include "skiff/engine/writer.hpp"\n#include "skiff/async/hub.hpp"'))
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("skiff/engine/session.hpp", out)
        self.assertIn("engine includes async", out)

    def test_the_policy_room_including_the_app_fails(self):
        self.edit("policy/runners.hpp", lambda t: t.replace(
            '#include "skiff/policy/policy.hpp"',
            '#include "skiff/policy/policy.hpp"\n#include "skiff/app/server.hpp"'))
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("policy includes app", out)

    def test_an_engine_file_that_names_a_feature_fails(self):
        self.edit("engine/writer.hpp", lambda t: t + "\nnamespace skiff::detail { class file_send; }\n")
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("names the feature 'file_send'", out)

    def test_a_feature_named_in_a_comment_or_string_passes(self):
        self.edit("engine/writer.hpp", lambda t: t + '\n// file_send is not named here\n'
                                                     'namespace skiff::detail { inline const char* w = "upload_state"; }\n')
        code, out = self.run_check()
        self.assertEqual(code, 0, out)


if __name__ == "__main__":
    unittest.main()
