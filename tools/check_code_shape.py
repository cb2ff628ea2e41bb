#!/usr/bin/env python3
"""Check the shape of the headers: function length, header length, and no #if inside a function.

  python3 tools/check_code_shape.py               check include/skiff/ (exit 1 on a violation)
  python3 tools/check_code_shape.py --root DIR    check DIR/skiff/ instead (DIR holds skiff/)

Every limit, and why it is there, is in the table below; nothing else in this file decides
what passes. A violation is printed as `path:line: name: N lines (limit L)` or
`path:line: #if inside name`, where the line is that of the function's name, or
`path: N lines (header limit L)`.

How C++ is read (enough for these headers, no more): comments, string and character literals
(with their prefixes) and raw strings are blanked first, so a brace or `#` in them counts for
nothing; digit separators (1'000) are not taken for character literals. Preprocessor lines are
set aside. Then braces are matched, and each `{` at namespace or class scope is classified by
the text before it: a function body (its head ends in `)` plus qualifiers, a trailing return
type or a constructor's initializer list), a namespace, class, struct or union body (searched
for functions in turn), or anything else (an enum, an initializer), skipped. Everything inside
a function body, lambdas and local classes included, counts toward that function. A function's
length is the lines from its opening brace to its closing one, both included.
Stdlib only, deterministic (files in sorted order).
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "include"

# ---------------------------------------------------------------------------------------------
# The limits and their reasons: the one place to read or change them (style.md sections 1, 11).
# ---------------------------------------------------------------------------------------------
LIMITS = {
    # The hot path (accept -> read -> parse -> route -> handle -> write) must read top to
    # bottom in one sitting; picohttpparser's functions are 25-62 lines, ae_epoll.c's aeApiPoll
    # 27. Longer functions here (event_loop 238 lines in lithium, onData 216 in uWS) are where
    # the bugs of the peers live.
    "function_lines": 60,
    # The loop driver is the one function a reader wants whole: redis's aeProcessEvents is
    # 109 lines. It may reach 100, and only with why-comments: at least one comment per
    # `loop_driver_lines_per_comment` lines beyond function_lines.
    "loop_driver_lines": 100,
    "loop_driver_lines_per_comment": 20,
    # A header is one concern, read in one sitting (issue 29): past this length it holds two,
    # and is split by concern (websocket/taker.hpp and its parts show how).
    "header_lines": 400,
}

# Headers allowed past header_lines, each with its own limit and the reason.
LONGER_HEADERS = {
    "skiff/engine/session.hpp": (450, "the whole HTTP/1.1 protocol of a connection, which a reader follows "
                                      "from the read to the write in one file"),
}

# The loop driver: (file under include/, function name).
LOOP_DRIVERS = {
    ("skiff/engine/event_loop.hpp", "run"),
}

# Files that are not on the hot path: run once at start-up (or never: macros), so their
# length does not cost a request. The #if rule still applies to them: platform code is chosen
# at file scope everywhere.
START_UP_ONLY = {
    "skiff/engine/options.hpp": "the options struct and its defaults, read at start-up",
    "skiff/app/server.hpp": "basic_server's public face: route registration, listen, run, stop",
    "skiff/policy/runners.hpp": "starts and joins the policies' threads",
    "skiff/platform/thread.hpp": "thread start-up and CPU pinning",
}

# The directives that choose code: inside a function body they are errors (platform code is
# chosen at file scope, behind one interface: style.md section 1.2).
CONDITIONAL_DIRECTIVES = {"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"}
# ---------------------------------------------------------------------------------------------


class ShapeError(Exception):
    """The input could not be read as C++ (unbalanced braces, an unterminated literal)."""


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def _blank(chars, start, end):
    for k in range(start, end):
        if chars[k] != "\n":
            chars[k] = " "


RAW_PREFIXES = {"R", "u8R", "uR", "UR", "LR"}


def mask(text):
    """Returns (code, directives): the text with comments and literals blanked (same length,
    newlines kept, quotes kept) and preprocessor lines blanked; directives is a list of
    (position, name) of each preprocessor line, e.g. (120, "ifdef")."""
    chars = list(text)
    directives = []
    i, n = 0, len(text)
    line_start = True  # only whitespace since the last newline (outside comments)
    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
        elif c in " \t\r\f\v":
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            _blank(chars, i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ShapeError(f"line {line_of(text, i)}: unterminated comment")
            _blank(chars, i, end + 2)
            i = end + 2
        elif c == "#" and line_start:
            i = _directive(text, chars, i, directives)
        elif c == '"':
            word = _word_before(text, i)
            if word in RAW_PREFIXES:
                i = _raw_string(text, chars, i)
            else:
                i = _quoted(text, chars, i, '"')
            line_start = False
        elif c == "'":
            word = _word_before(text, i)
            if word[:1].isdigit():  # a digit separator: 1'000'000, 0xFF'FF
                i += 1
            else:
                i = _quoted(text, chars, i, "'")
            line_start = False
        else:
            line_start = False
            i += 1
    return "".join(chars), directives


def _word_before(text, i):
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_."):
        j -= 1
    return text[j:i]


def _quoted(text, chars, i, quote):
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            _blank(chars, i + 1, j)
            return j + 1
        if text[j] == "\n":
            break
        j += 1
    raise ShapeError(f"line {line_of(text, i)}: unterminated {quote}literal{quote}")


def _raw_string(text, chars, i):
    open_paren = text.find("(", i)
    delimiter = text[i + 1:open_paren]
    if open_paren < 0 or len(delimiter) > 16 or any(ch in delimiter for ch in ' \\)\n'):
        raise ShapeError(f"line {line_of(text, i)}: malformed raw string")
    end = text.find(")" + delimiter + '"', open_paren)
    if end < 0:
        raise ShapeError(f"line {line_of(text, i)}: unterminated raw string")
    close = end + len(delimiter) + 1
    _blank(chars, i + 1, close)
    return close + 1


def _directive(text, chars, i, directives):
    """Blanks one preprocessor line (with its continuations) and records its name."""
    j = i
    while True:
        end = text.find("\n", j)
        end = len(text) if end < 0 else end
        if end > 0 and text[end - 1] == "\\":
            j = end + 1
            continue
        break
    match = re.match(r"#\s*([A-Za-z_]\w*)", text[i:end])
    directives.append((i, match.group(1) if match else ""))
    _blank(chars, i, end)
    return end


def match_braces(code, text):
    pairs, stack = {}, []
    for pos, c in enumerate(code):
        if c == "{":
            stack.append(pos)
        elif c == "}":
            if not stack:
                raise ShapeError(f"line {line_of(text, pos)}: '}}' without its '{{'")
            pairs[stack.pop()] = pos
    if stack:
        raise ShapeError(f"line {line_of(text, stack[-1])}: '{{' never closed")
    return pairs


# The head of a function body, after the parameter list: qualifiers, noexcept(...), and a
# trailing return type, stripped from the end until the `)` of the parameters shows.
QUALIFIER = re.compile(r"(\bconst|\bvolatile|\bnoexcept|\boverride|\bfinal|\bmutable|&&|&)\s*$")
ACCESS = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+")
NAME = re.compile(r"(operator\s*(?:\(\s*\)|\[\s*\]|[^\s\w(]+|\w[\w\s:<>*&]*?)|~?[A-Za-z_]\w*)\s*$")


def _matching_open(head, close):
    """The index of the '(' (or '[', '<') that the bracket at head[close] closes, or -1."""
    opener = {")": "(", "]": "[", ">": "<"}[head[close]]
    depth = 0
    for k in range(close, -1, -1):
        if head[k] == head[close]:
            depth += 1
        elif head[k] == opener:
            depth -= 1
            if depth == 0:
                return k
    return -1


def _strip_tail(head):
    """Drops trailing qualifiers and noexcept(...) from a head; returns the rest, rstripped."""
    while True:
        head = head.rstrip()
        if head.endswith(")"):
            k = _matching_open(head, len(head) - 1)
            if k > 0 and re.search(r"\b(noexcept|throw)\s*$", head[:k]):
                head = head[:k]
                continue
            return head
        match = QUALIFIER.search(head)
        if not match:
            return head
        head = head[:match.start()]


def _after_parameters(head, is_mark):
    """The first position k at bracket depth 0 where is_mark(k) holds and the text before k,
    qualifiers stripped, ends with a ')' (a parameter list); or -1."""
    depth = 0
    for k, c in enumerate(head):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and is_mark(k) and _strip_tail(head[:k]).endswith(")"):
            return k
    return -1


def _top_level_ctor_colon(head):
    """The position of a constructor's ':' (a single colon after the parameters), or -1."""
    return _after_parameters(head, lambda k: head[k] == ":" and head[k - 1:k] != ":" and head[k + 1:k + 2] != ":")


def _arrow(head):
    """The position of a trailing return type's '->' (after the parameters), or -1."""
    return _after_parameters(head, lambda k: head.startswith("->", k))


def classify(head):
    """What the '{' after `head` opens: ("function", name, offset of the name in head),
    ("init", ...) for a brace inside a constructor's initializer list, ("scope", ...) for a
    namespace/class body, or ("other", ...)."""
    stripped = ACCESS.sub(lambda m: " " * len(m.group(0)), head)
    ctor = _top_level_ctor_colon(stripped)
    if ctor >= 0:
        tail = stripped.rstrip()
        if not (tail.endswith(")") or tail.endswith("}")):
            return ("init", None, None)  # a member's braces: `: a_{x}` still before the body
        stripped = stripped[:ctor]
    arrow = _arrow(stripped)
    if arrow >= 0:
        stripped = stripped[:arrow]
    signature = _strip_tail(stripped)
    if signature.endswith(")"):
        open_paren = _matching_open(signature, len(signature) - 1)
        before = signature[:open_paren]
        if open_paren > 0 and before.rstrip().endswith("]") and not re.search(r"operator\s*\[\s*\]\s*$", before):
            match = re.search(r"([A-Za-z_]\w*)\s*=\s*\[", before)  # a lambda at namespace scope
            name, where = (match.group(1), match.start(1)) if match else ("lambda", open_paren)
            return ("function", name, where)
        match = NAME.search(before)
        if match:
            qualified = re.search(r"((?:[A-Za-z_]\w*\s*::\s*)*)$", before[:match.start()])
            start = qualified.start(1) if qualified and qualified.group(1) else match.start()
            name = re.sub(r"\s+", "", before[start:match.end()])
            return ("function", re.sub(r"\boperator(?=\w)", "operator ", name), start)
    words = re.sub(r"<[^<>{};]*>", " ", stripped)  # template arguments out of the way
    words = re.sub(r"<[^<>{};]*>", " ", words)
    if re.match(r"\s*(inline\s+)?namespace\b", words) or re.match(r'\s*extern\s*"\s*"\s*$', words):
        return ("scope", None, None)
    if re.search(r"\b(class|struct|union)\b", words) and not re.search(r"\benum\b", words):
        return ("scope", None, None)
    return ("other", None, None)


def find_functions(text):
    """Returns (functions, directives) for one file's text: functions as
    (name, name_line, open_pos, close_pos, first_line, last_line)."""
    code, directives = mask(text)
    pairs = match_braces(code, text)
    functions = []

    def scope(begin, end):
        head_start, depth, i = begin, 0, begin
        while i < end:
            c = code[i]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == ";" and depth == 0:
                head_start = i + 1
            elif c == "{":
                close = pairs[i]
                if depth == 0:
                    kind, name, where = classify(code[head_start:i])
                    if kind == "function":
                        functions.append((name, line_of(text, head_start + where), i, close,
                                          line_of(text, i), line_of(text, close)))
                        head_start = close + 1
                    elif kind == "scope":
                        scope(i + 1, close)
                        head_start = close + 1
                i = close
            i += 1

    scope(0, len(code))
    return functions, directives


def _comment_lines(text, first, last):
    lines = text.split("\n")[first - 1:last]
    return sum(1 for line in lines if "//" in line or "/*" in line)


def check_text(name, text, start_up_only=False):
    """The violations in one file, as printable lines. `name` is its path under include/."""
    functions, directives = find_functions(text)
    problems = []
    header_limit = LONGER_HEADERS.get(name, (LIMITS["header_lines"], ""))[0]
    if len(text.splitlines()) > header_limit:
        problems.append(f"{name}: {len(text.splitlines())} lines (header limit {header_limit})")
    for fname, name_line, open_pos, close_pos, first, last in functions:
        for pos, directive in directives:
            if directive in CONDITIONAL_DIRECTIVES and open_pos < pos < close_pos:
                problems.append(f"{name}:{line_of(text, pos)}: #{directive} inside {fname} (line {name_line}):"
                                " choose platform code at file scope")
        if start_up_only:
            continue
        length = last - first + 1
        base = LIMITS["function_lines"]
        if length <= base:
            continue
        if (name, fname.split("::")[-1]) in LOOP_DRIVERS:
            needed = -(-(length - base) // LIMITS["loop_driver_lines_per_comment"])
            comments = _comment_lines(text, first, last)
            if length <= LIMITS["loop_driver_lines"] and comments >= needed:
                continue
            problems.append(f"{name}:{name_line}: {fname}: {length} lines (loop driver: limit "
                            f"{LIMITS['loop_driver_lines']}, with {needed} comment lines; it has {comments})")
            continue
        problems.append(f"{name}:{name_line}: {fname}: {length} lines (limit {base})")
    return problems


def check_tree(include):
    """Every header under include/skiff/; returns (problems, notes)."""
    problems, notes = [], []
    headers = sorted(p for p in (include / "skiff").rglob("*") if p.suffix in (".hpp", ".h") and p.is_file())
    names = {p.relative_to(include).as_posix() for p in headers}
    for stale in sorted(set(START_UP_ONLY) - names):
        notes.append(f"START_UP_ONLY names {stale}, which does not exist: update the table")
    for stale in sorted(set(LONGER_HEADERS) - names):
        notes.append(f"LONGER_HEADERS names {stale}, which does not exist: update the table")
    for stale in sorted({f for f, _ in LOOP_DRIVERS} - names):
        notes.append(f"LOOP_DRIVERS names {stale}, which does not exist: update the table")
    for path in headers:
        name = path.relative_to(include).as_posix()
        try:
            problems += check_text(name, path.read_text(), name in START_UP_ONLY)
        except ShapeError as err:
            problems.append(f"{name}: cannot be read as C++: {err}")
    return problems, notes


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=pathlib.Path, default=INCLUDE, help="the folder that holds skiff/")
    args = parser.parse_args()
    problems, notes = check_tree(args.root)
    for note in notes:
        print(f"check_code_shape.py: note: {note}", file=sys.stderr)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_code_shape.py: {len(problems)} violation(s); the limits and their reasons are at the top"
              " of tools/check_code_shape.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
