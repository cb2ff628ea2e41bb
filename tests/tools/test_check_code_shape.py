#!/usr/bin/env python3
"""Self-test of tools/check_code_shape.py on small synthetic headers.

Each case is a few lines of C++ built to sit just inside or just outside a limit, or to hide
a brace or a `#` where a naive scanner would count it. The last tests run the script itself
over a temporary include tree, as ctest runs it over include/. Run by ctest as
check_code_shape_self_test; stdlib only.
"""
import importlib.util
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parent.parent.parent / "tools" / "check_code_shape.py"
spec = importlib.util.spec_from_file_location("check_code_shape", SCRIPT)
shape = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shape)

LIMIT = shape.LIMITS["function_lines"]


def function(name, lines, filler="    x += 1;", head="inline void {name}(int x) {{"):
    """A function whose body, opening and closing brace lines included, spans `lines` lines."""
    return "\n".join([head.format(name=name)] + [filler] * (lines - 2) + ["}"]) + "\n"


def lengths(text):
    functions, _ = shape.find_functions(text)
    return {f[0]: f[5] - f[4] + 1 for f in functions}


class FunctionLength(unittest.TestCase):
    def test_the_table_holds_the_project_limits(self):
        # style.md sections 1.3 and 11: 60 lines, the loop driver ~100 with why-comments.
        self.assertEqual(shape.LIMITS["function_lines"], 60)
        self.assertEqual(shape.LIMITS["loop_driver_lines"], 100)
        self.assertEqual(shape.LIMITS["header_lines"], 400)

    def test_a_header_past_its_length_fails_named_with_its_length(self):
        limit = shape.LIMITS["header_lines"]
        self.assertEqual(shape.check_text("skiff/a.hpp", "// line\n" * limit), [])
        self.assertEqual(shape.check_text("skiff/a.hpp", "// line\n" * (limit + 1)),
                         [f"skiff/a.hpp: {limit + 1} lines (header limit {limit})"])

    def test_a_longer_header_has_its_own_limit(self):
        name, (limit, why) = next(iter(shape.LONGER_HEADERS.items()))
        self.assertTrue(why)
        self.assertEqual(shape.check_text(name, "// line\n" * limit), [])
        self.assertEqual(shape.check_text(name, "// line\n" * (limit + 1)),
                         [f"{name}: {limit + 1} lines (header limit {limit})"])

    def test_at_the_limit_passes_one_more_fails_with_file_line_name_length(self):
        self.assertEqual(shape.check_text("skiff/a.hpp", function("fits", LIMIT)), [])
        text = "// header\n\n" + function("too_long", LIMIT + 1)
        self.assertEqual(shape.check_text("skiff/a.hpp", text),
                         [f"skiff/a.hpp:3: too_long: {LIMIT + 1} lines (limit {LIMIT})"])

    def test_braces_in_comments_and_literals_do_not_count(self):
        body = [
            'inline int tricky() {',
            '    // a } in a comment',
            '    /* and { in a block',
            '       comment } */',
            '    const char* s = "}\\"{";',
            "    char c = '}';",
            "    char d = '\\'';",
            '    const char* r = R"x(a )" } raw string)x";',
            '    const char* u = u8R"(})";',
            "    int big = 1'000'000 + 0xFF'FF;",
            "    return c + d + big + s[0] + r[0] + u[0];",
            '}',
            'inline int after() { return 1; }',
        ]
        self.assertEqual(lengths("\n".join(body) + "\n"), {"tricky": 12, "after": 1})

    def test_members_constructors_operators_and_qualifiers_are_functions(self):
        text = """
namespace skiff::detail {
template <class T> struct box : base<T> {
public:
    box(int a) noexcept : a_{a}, b_(a), c_{} {
        a_ += 1;
    }
    ~box() { a_ = 0; }
    int get() const& noexcept(true) { return a_; }
    bool operator()(int v) const { return v == a_; }
    int& operator[](int) { return a_; }
    explicit operator bool() const noexcept { return a_ != 0; }
    auto size() const -> int {
        return 1;
    }
    int a_{0};
    int b_ = 0;
    int c_[2] = {1, 2};
    enum class kind { one, two };
};
inline int box_free(const box<int>& b) { return b.get(); }
} // namespace skiff::detail
extern "C" {
int c_function(void) {
    return 0;
}
}
inline auto top_level_lambda = [](int v) {
    return v;
};
"""
        self.assertEqual(lengths(text), {
            "box": 3, "~box": 1, "get": 1, "operator()": 1, "operator[]": 1, "operator bool": 1,
            "size": 3, "box_free": 1, "c_function": 3, "top_level_lambda": 3})

    def test_an_out_of_class_member_keeps_its_qualified_name(self):
        self.assertEqual(lengths("void loop::run() {\n}\n"), {"loop::run": 2})

    def test_a_lambda_inside_counts_toward_the_enclosing_function(self):
        lambda_lines = ["    auto f = [&](int y) {"] + ["        y += 1;"] * LIMIT + ["        return y;", "    };"]
        text = "inline int outer(int x) {\n" + "\n".join(lambda_lines) + "\n    return f(x);\n}\n"
        self.assertEqual(lengths(text), {"outer": LIMIT + 6})  # head, lambda (LIMIT + 3), return, brace
        self.assertEqual(len(shape.check_text("skiff/a.hpp", text)), 1)
        self.assertIn("outer:", shape.check_text("skiff/a.hpp", text)[0])

    def test_unbalanced_braces_are_an_error_not_a_guess(self):
        with self.assertRaises(shape.ShapeError):
            shape.find_functions("inline void f() {\n")
        with self.assertRaises(shape.ShapeError):
            shape.find_functions('inline void f() { const char* s = "open; }\n')


class ConditionalInsideFunction(unittest.TestCase):
    def test_an_if_inside_a_body_is_an_error(self):
        for directive in ("#if defined(__linux__)", "#ifdef __APPLE__", "#ifndef X", "  #  if X"):
            text = f"inline void f() {{\n{directive}\n    g();\n#endif\n}}\n"
            problems = shape.check_text("skiff/a.hpp", text)
            self.assertEqual(len(problems), 1, directive)
            self.assertTrue(problems[0].startswith("skiff/a.hpp:2: #"), problems[0])
            self.assertIn("inside f (line 1)", problems[0])

    def test_an_elif_inside_a_body_is_reported_too(self):
        text = "#if A\n#endif\ninline void f() {\n#if A\n    a();\n#elif B\n    b();\n#endif\n}\n"
        problems = shape.check_text("skiff/a.hpp", text)
        self.assertEqual([p.split(": ")[1] for p in problems], ["#if inside f (line 3)", "#elif inside f (line 3)"])

    def test_an_if_at_file_or_class_scope_is_fine(self):
        text = """#if defined(__linux__)
inline int f() { return 1; }
#else
inline int f() { return 2; }
#endif // __linux__
struct s {
#if defined(X)
    int g() { return 1; }
#endif // X
};
"""
        self.assertEqual(shape.check_text("skiff/a.hpp", text), [])

    def test_a_hash_in_a_comment_or_string_inside_a_body_is_not_a_directive(self):
        text = ('inline const char* f() {\n    // #if in a comment\n    /*\n#ifdef X\n    */\n'
                '    return R"(\n#if inside a raw string\n)";\n}\n')
        self.assertEqual(shape.check_text("skiff/a.hpp", text), [])

    def test_the_rule_holds_in_start_up_only_files(self):
        text = function("long_but_start_up", LIMIT + 40) + "inline void f() {\n#if X\n#endif\n}\n"
        problems = shape.check_text("skiff/s.hpp", text, start_up_only=True)
        self.assertEqual(len(problems), 1)
        self.assertIn("#if inside f", problems[0])


class LoopDriver(unittest.TestCase):
    driver_file, _ = sorted(shape.LOOP_DRIVERS)[0]
    per_comment = shape.LIMITS["loop_driver_lines_per_comment"]

    def driver(self, lines, comments):
        filler = ["        x += 1;"] * (lines - 2 - comments) + ["        // why: ..."] * comments
        return "struct loop {\n    void run(int x) {\n" + "\n".join(filler) + "\n    }\n};\n"

    def test_the_loop_driver_may_reach_its_limit_with_why_comments(self):
        top = shape.LIMITS["loop_driver_lines"]
        needed = -(-(top - LIMIT) // self.per_comment)
        self.assertEqual(shape.check_text(self.driver_file, self.driver(top, needed)), [])
        self.assertEqual(len(shape.check_text(self.driver_file, self.driver(top, needed - 1))), 1)
        self.assertEqual(len(shape.check_text(self.driver_file, self.driver(top + 1, needed + 5))), 1)

    def test_only_the_named_function_in_the_named_file_gets_the_loop_limit(self):
        text = self.driver(LIMIT + 10, 5)
        self.assertEqual(shape.check_text(self.driver_file, text), [])
        self.assertEqual(len(shape.check_text("skiff/other.hpp", text)), 1)
        renamed = text.replace("void run(", "void serve(")
        self.assertEqual(len(shape.check_text(self.driver_file, renamed)), 1)


class Script(unittest.TestCase):
    def setUp(self):
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="skiff-shape-"))
        self.addCleanup(shutil.rmtree, self.root)
        (self.root / "skiff" / "part").mkdir(parents=True)
        (self.root / "skiff" / "part" / "ok.hpp").write_text(function("fine", 10))

    def run_script(self):
        return subprocess.run([sys.executable, str(SCRIPT), "--root", str(self.root)],
                              capture_output=True, text=True)

    def test_a_clean_tree_passes(self):
        result = self.run_script()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")

    def test_a_violation_fails_the_run_and_is_named(self):
        (self.root / "skiff" / "part" / "bad.hpp").write_text(function("grown", LIMIT + 2))
        result = self.run_script()
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, f"skiff/part/bad.hpp:1: grown: {LIMIT + 2} lines (limit {LIMIT})\n")

    def test_a_start_up_only_file_may_hold_a_long_function(self):
        name = sorted(shape.START_UP_ONLY)[0]
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(function("set_up", LIMIT + 20))
        self.assertEqual(self.run_script().returncode, 0)


if __name__ == "__main__":
    unittest.main()
