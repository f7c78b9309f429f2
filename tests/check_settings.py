#!/usr/bin/env python3
"""Every LODE_* environment variable lode or its tests read is in the table
of core/base/settings.c, and lode's own sources read them only through its
getters.

usage: check_settings.py SOURCE_DIR

Fails on:
- a getenv("LODE_...") in core/, backend-*/ outside core/base/settings.c (a
  variable read around the table);
- a "LODE_..." name inside a string literal (not a -DLODE_ kernel macro) of core/ or backend-*/ sources
  (messages that name a variable, tune_cache's keys) that the table lacks;
- a getenv("LODE_...") / os.environ LODE_ name in tests/ that the table
  lacks (tests may read their own hooks directly, but the hooks are listed);
- a row whose readers name a file that does not exist or does not use the
  setting (its LODE_SETTING_ id or its name), so `lode --help-env` points
  at the code that reads it.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
table_src = (root / "core/base/settings.c").read_text()
table = set(re.findall(r'^\s*\{LODE_SETTING_\w+,\s*"(LODE_[A-Z0-9_]+)"', table_src, re.M))
if len(table) < 10:
    sys.exit(f"check_settings: only {len(table)} names parsed from core/base/settings.c")

NAME = r"LODE_[A-Z0-9_]+"
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
errors = []


def sources(*globs):
    for g in globs:
        for p in sorted(root.glob(g)):
            if p.is_file() and "build" not in p.relative_to(root).parts:
                yield p


for p in sources("core/**/*.c", "core/**/*.h", "backend-*/**/*.c", "backend-*/**/*.h", "backend-*/**/*.cu",
                 "backend-*/**/*.cuh", "backend-*/**/*.cl"):
    rel = p.relative_to(root)
    text = p.read_text(errors="replace")
    for n, line in enumerate(text.splitlines(), 1):
        if not str(rel).startswith("core/base/settings.") and re.search(r"getenv\s*\(\s*\"LODE_", line):
            errors.append(f"{rel}:{n}: getenv of a LODE_ variable: use core/base/settings.h")
        if line.lstrip().startswith("#include"):
            continue
        for lit in STRING.findall(line):
            for name in re.findall(r"(?<!-D)(?<!-D )\b" + NAME, lit):  # -DLODE_X: a kernel's macro
                if name not in table:
                    errors.append(f"{rel}:{n}: {name} is not in core/base/settings.c's table")

for p in sources("tests/**/*.c", "tests/**/*.h", "tests/**/*.py", "scripts/**/*.py"):
    rel = p.relative_to(root)
    text = p.read_text(errors="replace")
    pats = [r'getenv\s*\(\s*"(' + NAME + r')"', r'setenv\s*\(\s*"(' + NAME + r')"',
            r'os\.environ(?:\.get)?\s*[\(\[]\s*"(' + NAME + r')"', r'dict\(os\.environ,\s*(' + NAME + r')=',
            r'ENVIRONMENT\s+"(' + NAME + r')=']
    for n, line in enumerate(text.splitlines(), 1):
        for pat in pats:
            for name in re.findall(pat, line):
                if name not in table:
                    errors.append(f"{rel}:{n}: {name} is not in core/base/settings.c's table")

ROW = re.compile(r'\{(LODE_SETTING_\w+),\s*"(' + NAME + r')".*?\.readers\s*=\s*"([^"]*)"', re.S)
for setting_id, name, readers in ROW.findall(table_src):
    for path in re.findall(r"[\w./-]+\.(?:cu|cl|c|h|py)\b", readers):
        source = root / path
        if not source.is_file():
            errors.append(f"core/base/settings.c: {name}: reader {path} does not exist")
        elif not re.search(r"\b(" + setting_id + "|" + name + r")\b", source.read_text(errors="replace")):
            errors.append(f"core/base/settings.c: {name}: reader {path} does not use it")

for e in errors:
    print(e)
print(f"check_settings: {len(table)} settings; {len(errors)} problem(s)")
sys.exit(1 if errors else 0)
