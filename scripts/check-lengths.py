#!/usr/bin/env python3
"""Reports the longest files and functions of lode and fails past the limits.

    check-lengths.py [--top N] [PATH ...]

Without PATH it reads the files git tracks (run from anywhere inside the
clone); with PATH it reads those files only. Files counted: C, headers, CUDA,
OpenCL C, Python, shell and CMake. Functions counted: C-like ones (C, CUDA,
OpenCL C, headers) and Python ones, each from the first line of its head to
its closing brace or last statement.

The limits are 800 lines a file and 80 lines a function: a file that grows
past them is split in the change that crosses the line. Probes (backend-*/
probes/, throwaway measurement programs) and generated files (a "do not edit"
line near the top) are not counted.

Exit status: 0 within the limits, 1 past them (one line per offender).
"""
import argparse
import ast
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80

C_LIKE = (".c", ".h", ".cu", ".cuh", ".cl")
COUNTED = C_LIKE + (".py", ".sh", ".cmake")
PROBES = re.compile(r"^backend-[^/]+/probes/")
DIRECTIVE = re.compile(r"[ \t]*#")
GENERATED = re.compile(r"do not edit", re.IGNORECASE)
# Words that take parentheses in a function's head but are not its name.
NOT_A_NAME = {"__attribute__", "__launch_bounds__", "__declspec", "alignas", "_Alignas",
              "__align__", "reqd_work_group_size", "if", "while", "for", "switch", "return",
              "sizeof"}


def counted(path):
    name = os.path.basename(path)
    return name == "CMakeLists.txt" or name.endswith(COUNTED)


def blank_out_c(text):
    """The text with comments, string and character literals and preprocessor
    lines replaced by spaces, newlines kept, so braces in them do not count
    and line numbers stay right."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and DIRECTIVE.match(text, i):
            # A preprocessor line, with its backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:end]))
            i = end
            line_start = False
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n and text[j] == c else ""))
            i = j + 1 if j < n and text[j] == c else j
            line_start = False
            continue
        out.append(c)
        if c == "\n":
            line_start = True
        elif c not in " \t":
            line_start = False
        i += 1
    return "".join(out)


def function_name(head):
    """The name in a function's head: the identifier before its first
    top-level '(' that is no attribute, or None when the head is no function
    head (an initialiser, a struct, an extern "C" block)."""
    head = head.strip()
    if not head.endswith(")") and not re.search(r"\)\s*(const|noexcept|override)?\s*$", head):
        return None
    depth = 0
    for m in re.finditer(r"[A-Za-z_]\w*|[()]", head):
        tok = m.group(0)
        if tok == "(":
            if depth == 0:
                ident = re.search(r"([A-Za-z_]\w*)\s*$", head[:m.start()])
                if ident and ident.group(1) not in NOT_A_NAME:
                    return ident.group(1)
            depth += 1
        elif tok == ")":
            depth -= 1
    return None


def c_functions(text):
    """(name, first line, line count) of each function defined at file scope
    (or inside extern "C" / namespace blocks) of a C-like source."""
    code = blank_out_c(text)
    found = []
    stack = []          # per open brace: "pass" (extern/namespace), "fn" or "other"
    head_start = None   # offset where the current file-scope declaration began
    fn_start = None
    for i, c in enumerate(code):
        at_file_scope = all(kind == "pass" for kind in stack)
        if c == "{":
            if at_file_scope:
                head = code[head_start:i] if head_start is not None else ""
                if re.search(r'(extern\s*"\s*"|namespace(\s+\w+)?)\s*$', head):
                    stack.append("pass")
                    head_start = None
                    continue
                name = function_name(head)
                if name:
                    stack.append("fn")
                    fn_start = (name, code.count("\n", 0, head_start) + 1)
                    continue
            stack.append("other")
        elif c == "}":
            kind = stack.pop() if stack else "other"
            if kind == "fn":
                name, first = fn_start
                found.append((name, first, code.count("\n", 0, i) + 1 - first + 1))
            if all(k == "pass" for k in stack):
                head_start = None
        elif c == ";" and at_file_scope:
            head_start = None
        elif at_file_scope and head_start is None and not c.isspace():
            head_start = i
    return found


def python_functions(text, path):
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        raise SystemExit(f"{path}: cannot parse: {e}")
    return [(node.name, node.lineno, node.end_lineno - node.lineno + 1)
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def measure(path):
    """(line count, [(name, first line, line count)]) of one file, or None
    when the file is not counted."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if any(GENERATED.search(line) for line in text.split("\n", 5)[:5]):
        return None
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if path.endswith(C_LIKE):
        return lines, c_functions(text)
    if path.endswith(".py"):
        return lines, python_functions(text, path)
    return lines, []


def tracked_files():
    root = subprocess.check_output(["git", "rev-parse", "--show-toplevel"], text=True).strip()
    names = subprocess.check_output(["git", "-C", root, "ls-files"], text=True).split("\n")
    return root, [n for n in names if n]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=10, help="how many of the longest to list")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    if args.paths:
        root, names = "", args.paths
    else:
        root, names = tracked_files()
    files, functions = [], []
    for name in names:
        if not counted(name) or PROBES.search(name):
            continue
        result = measure(os.path.join(root, name))
        if result is None:
            continue
        lines, fns = result
        files.append((lines, name))
        functions += [(count, f"{name}:{first}", fn) for fn, first, count in fns]
    files.sort(key=lambda f: (-f[0], f[1]))
    functions.sort(key=lambda f: (-f[0], f[1]))
    print(f"longest files (limit {MAX_FILE_LINES} lines):")
    for lines, name in files[:args.top]:
        print(f"  {lines:5d} {name}")
    print(f"longest functions (limit {MAX_FUNCTION_LINES} lines):")
    for count, where, fn in functions[:args.top]:
        print(f"  {count:5d} {where} {fn}")
    over = [f"file {name}: {lines} lines" for lines, name in files if lines > MAX_FILE_LINES]
    over += [f"function {fn} at {where}: {count} lines"
             for count, where, fn in functions if count > MAX_FUNCTION_LINES]
    for line in over:
        print(f"too long: {line}")
    if over:
        print(f"{len(over)} past the limits: split them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
