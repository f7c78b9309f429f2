#!/usr/bin/env python3
"""The documents' pointers lead somewhere.

1. Every repository path that README.md and the pages of docs/ name exists
(docs/ARCHITECTURE.md, the map of the code, names the most). A path is
a backticked word or a link target that starts with a top-level folder or
file of the repository as the page spells it (`core/base/algos.def`,
`backend-cuda/`), or any backticked word with a '/' and a file suffix. In a
path, `<name>` stands for every algorithm of core/base/algos.def (each must
exist), and `*`, `?` and `[ch]` are globs that must match at least one file.
Placeholders of other kinds (`<b>`, `<backend>`) name nothing to check.

2. Every pointer to a document, anywhere in the tree, names a document that
exists and, where it quotes a section, a heading that document has: in the
comments and string literals of C, CUDA, OpenCL and JavaScript, the comments
and strings of Python (docstrings included), the comments and strings of
shell, CMake and systemd files, and the whole text of Markdown. A pointer
is `docs/<page>.md` or `README.md` (in Markdown and code alike), or a
bare `<page>.md` (a page of docs/ unless the root has it), optionally a
Markdown link, then optionally `, "Heading"`, `: "Heading"` or
` ("Heading")`. A quoted heading matches a heading of the document that
starts with it, backticks and case aside (`"Words"` is "Words: what the
counts mean").

usage: test_docs_paths.py SOURCE_DIR [DOC ...]   (DOC relative to SOURCE_DIR,
default README.md and docs/*.md; the pointers are checked over all of
SOURCE_DIR)
"""
import glob
import io
import os
import pathlib
import re
import subprocess
import sys
import tokenize

TOP_LEVEL = ("core", "backend-cpu", "backend-cuda", "backend-opencl", "cmake",
             "scripts", "tests", "docs", "contrib", ".ci")
TOP_FILES = ("README.md", "CMakeLists.txt", "CMakePresets.json")
# Fewer paths than this in the map of the code means the extraction broke,
# not that the page is right.
MAP, MIN_PATHS = "docs/ARCHITECTURE.md", 40


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


# ---- 2. pointers to documents, over the whole tree ----

C_LIKE = (".c", ".h", ".cu", ".cuh", ".cl", ".def", ".js", ".cpp")
HASH_COMMENTED = (".sh", ".cmake", ".service", ".txt", ".gitignore")
HASH_COMMENTED_NAMES = ("CMakeLists.txt", "run", "commit-msg")
# Fewer pointers than these means the extraction broke.
MIN_POINTERS, MIN_SECTION_POINTERS = 40, 15

C_TOKEN = re.compile(r'/\*(.*?)\*/|//([^\n]*)|"((?:[^"\\\n]|\\.)*)"|\'(?:[^\'\\\n]|\\.)*\'',
                     re.S)
DOC_NAME = r"(?:docs/[A-Za-z0-9_-]+\.md|README\.md|(?<![/\w.-])[A-Z][A-Za-z0-9_-]*\.md)"
POINTER = re.compile(r"(?<![\w/.-])(" + DOC_NAME + r")(?:\]\(([^)\s]*)\))?"
                     r"(?:(?:,|:)? ?\(?(?:section )?\"([^\"]+)\")?")


def tree_files(root):
    """The files of the tree: git's list in a checkout, else a walk."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                             capture_output=True, text=True).stdout
        return [f for f in out.split("\0") if f and (root / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for top, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            files += [os.path.relpath(os.path.join(top, n), root) for n in names]
        return files


def c_fragments(text):
    """Comments (their leading '*'s dropped) and string literals of C-like code."""
    line_comment = []
    for m in C_TOKEN.finditer(text):
        if m.group(2) is not None:
            line_comment.append(m.group(2))
            nxt = text[m.end():m.end() + 200].lstrip(" \t\n")
            if nxt.startswith("//"):
                continue  # consecutive // lines are one comment
            yield "\n".join(line_comment)
            line_comment = []
        elif m.group(1) is not None:
            yield re.sub(r"\n\s*\*(?!/)", "\n", m.group(1))
        elif m.group(3) is not None:
            yield m.group(3).replace('\\"', '"').replace("\\n", "\n")


def hash_fragments(text):
    """Comments (consecutive '#' lines joined) and double-quoted strings of
    shell, CMake and systemd files."""
    block = []
    for line in text.split("\n") + [""]:
        code, comment = split_hash_comment(line)
        for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', code):
            yield m.group(1).replace('\\"', '"')
        if comment is not None and not code.strip():
            block.append(comment)
            continue
        if block:
            yield "\n".join(block)
            block = []
        if comment is not None:
            yield comment


def split_hash_comment(line):
    """(code, comment or None): a '#' outside quotes that starts the line or
    follows a blank starts a comment."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == "\\" and quote == '"':
                continue
            if ch == quote and (i == 0 or line[i - 1] != "\\"):
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t("):
            return line[:i], line[i + 1:]
    return line, None


def python_fragments(text):
    """Comments (consecutive lines joined) and string literals, docstrings
    included, of Python."""
    block, last_row = [], None
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            if block and last_row is not None and tok.start[0] != last_row + 1:
                yield "\n".join(block)
                block = []
            block.append(tok.string[1:])
            last_row = tok.start[0]
        elif tok.type == tokenize.STRING:
            yield tok.string
    if block:
        yield "\n".join(block)


def fragments(path, text):
    name = os.path.basename(path)
    if path.endswith(".md"):
        return [text]
    if path.endswith(".py"):
        return list(python_fragments(text))
    if path.endswith(C_LIKE):
        return list(c_fragments(text))
    if path.endswith(HASH_COMMENTED) or name in HASH_COMMENTED_NAMES:
        return list(hash_fragments(text))
    return []


def normalize(text):
    """Backticks, case and runs of blanks aside; a quote keeps its own ending
    ("Device health: ..." is no heading's start)."""
    return " ".join(text.replace("`", "").lower().split())


def starts_with_words(heading, start):
    """Whether heading starts with start, ending at a word's end."""
    return heading.startswith(start) and not heading[len(start):len(start) + 1].isalnum()


def headings(root, doc, cache={}):
    """The normalized headings of a document, fenced code aside."""
    if doc not in cache:
        found, fenced = [], False
        for line in (root / doc).read_text().split("\n"):
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"#{1,6} ", line):
                found.append(normalize(line.lstrip("#")))
        cache[doc] = found
    return cache[doc]


def resolve(root, source, name):
    """The document a pointer names, relative to the root; a bare <page>.md is
    a sibling in docs/ or a file at the root."""
    if "/" in name or name == "README.md":
        return name
    if source.startswith("docs/"):
        return "docs/" + name
    return name if (root / name).exists() else "docs/" + name


def check_pointer(root, source, m):
    """A message for a pointer that leads nowhere, else None."""
    doc = resolve(root, source, m.group(1))
    if not (root / doc).is_file():
        return f"{source} names {m.group(1)}, which does not exist"
    target = m.group(2)
    if target and not target.startswith(("http:", "https:", "#")):
        linked = (root / source).parent / target.split("#")[0]
        if not linked.exists():
            return f"{source} links {target}, which does not exist"
    section = m.group(3)
    if section and not any(starts_with_words(h, normalize(section))
                           for h in headings(root, doc)):
        return f'{source} names {doc}, "{section}": it has no such heading'
    return None


def check_pointers(root):
    """(pointers, with a section, failures) over the tree."""
    count, with_section, failures = 0, 0, []
    for source in tree_files(root):
        if source.endswith(".json") or source.startswith(("tests/vectors/", "build")):
            continue
        try:
            text = (root / source).read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for fragment in fragments(source, text):
            flat = " ".join(fragment.split())
            for m in POINTER.finditer(flat):
                count += 1
                with_section += m.group(3) is not None
                failure = check_pointer(root, source, m)
                if failure:
                    failures.append(failure)
    return count, with_section, failures


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    docs = sys.argv[2:] or ["README.md"] + sorted(
        str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))
    names = algorithms(root)
    failed = False
    for doc in docs:
        checked, missing = check_doc(root, doc, names)
        for path in sorted(set(missing)):
            print(f"FAIL: {doc} names {path}, which does not exist")
        print(f"{doc}: {len(checked)} paths named, {len(set(missing))} missing "
              f"(<name> over {', '.join(names)})")
        if doc == MAP and len(checked) < MIN_PATHS:
            print(f"FAIL: {doc}: only {len(checked)} paths found; the extraction is broken")
            failed = True
        failed = failed or bool(missing)
    count, with_section, failures = check_pointers(root)
    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"pointers to documents: {count}, {with_section} with a section, "
          f"{len(failures)} leading nowhere")
    if count < MIN_POINTERS or with_section < MIN_SECTION_POINTERS:
        print("FAIL: too few pointers found; the extraction is broken")
        failed = True
    failed = failed or bool(failures)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
