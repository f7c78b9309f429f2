#!/usr/bin/env python3
"""Every repository path that docs/ARCHITECTURE.md names exists.

A path is a backticked word or a link target that starts with a top-level
folder or file of the repository as the page spells it (`core/base/algos.def`,
`backend-cuda/`), or any backticked word with a '/' and a file suffix. In a
path, `<name>` stands for every algorithm of core/base/algos.def (each must
exist), and `*`, `?` and `[ch]` are globs that must match at least one file.
Placeholders of other kinds (`<b>`, `<backend>`) name nothing to check.

usage: test_docs_paths.py SOURCE_DIR [DOC ...]   (DOC relative to SOURCE_DIR,
default docs/ARCHITECTURE.md)
"""
import glob
import pathlib
import re
import sys

TOP_LEVEL = ("core", "backend-cpu", "backend-cuda", "backend-opencl", "cmake",
             "scripts", "tests", "docs", "contrib", ".ci")
TOP_FILES = ("README.md", "CMakeLists.txt", "CMakePresets.json")
# Fewer paths than this means the extraction broke, not that the page is right.
MIN_PATHS = 40


def algorithms(root):
    text = (root / "core" / "base" / "algos.def").read_text()
    names = re.findall(r"^LODE_ALGO\(\s*\w+\s*,\s*(\w+)\s*,", text, re.M)
    if not names:
        sys.exit("test_docs_paths: no LODE_ALGO row in core/base/algos.def")
    return names


def candidates(text):
    """(word, from_link) for every backticked word and markdown link target."""
    for m in re.finditer(r"`([^`\n]+)`", text):
        yield m.group(1).strip(), False
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        yield m.group(1).split("#")[0], True


def is_path(word, from_link):
    if not word or " " in word or "://" in word or word.startswith(("~", "$", "/", "-")):
        return False
    if from_link:
        return True
    first = word.split("/")[0]
    if first in TOP_LEVEL and "/" in word:
        return True
    if word in TOP_FILES:
        return True
    return "/" in word and re.search(r"\.[A-Za-z]{1,6}$", word) is not None \
        and not word.startswith("build/")


def expand(word, names):
    if "<name>" in word:
        return [word.replace("<name>", n) for n in names]
    return [word]


def exists(root, base, path):
    where = (base / path) if base else (root / path)
    if any(c in path for c in "*?["):
        return bool(glob.glob(str(where)))
    return where.exists()


def check_doc(root, doc, names):
    text = (root / doc).read_text()
    checked, missing = set(), []
    for word, from_link in candidates(text):
        if not is_path(word, from_link):
            continue
        if re.search(r"<(?!name>)[^>]*>", word):
            continue  # a placeholder the page does not expand (<b>, <backend>)
        for path in expand(word, names):
            key = (path, from_link)
            if key in checked:
                continue
            checked.add(key)
            # Links are relative to the page; backticked paths to the root.
            base = (root / doc).parent if from_link else None
            if not exists(root, base, path):
                missing.append(path)
    return checked, missing


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    docs = sys.argv[2:] or ["docs/ARCHITECTURE.md"]
    names = algorithms(root)
    failed = False
    for doc in docs:
        checked, missing = check_doc(root, doc, names)
        for path in sorted(set(missing)):
            print(f"FAIL: {doc} names {path}, which does not exist")
        print(f"{doc}: {len(checked)} paths named, {len(set(missing))} missing "
              f"(<name> over {', '.join(names)})")
        if len(checked) < MIN_PATHS:
            print(f"FAIL: {doc}: only {len(checked)} paths found; the extraction is broken")
            failed = True
        failed = failed or bool(missing)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
