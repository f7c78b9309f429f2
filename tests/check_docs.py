#!/usr/bin/env python3
"""The README's list of documents agrees with the documents: every path it
names exists, and a document whose status line says it is built is not
called unbuilt there (#39: docs/TF-PROOF.md was "not built yet" in the
README while its own status said "built and measured").

usage: check_docs.py SOURCE_DIR
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
readme = (root / "README.md").read_text()
errors = []

m = re.search(r"^## Documents\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
if m is None:
    sys.exit("check_docs: README.md has no '## Documents' section")
# "- `path`: text" bullets, continuation lines indented.
entries = re.findall(r"^- `([^`]+)`: (.*?)(?=^- |\Z)", m.group(1), re.M | re.S)
if len(entries) < 3:
    sys.exit(f"check_docs: only {len(entries)} entries parsed from README's document list")
for path, text in entries:
    doc = root / path
    if not doc.is_file():
        errors.append(f"README names {path}, which does not exist")
        continue
    head = "\n".join(doc.read_text().splitlines()[:10])
    status = re.search(r"^Status \([^)]*\): \*\*([^*]+)\*\*", head, re.M)
    if status is None:
        continue
    built = re.match(r"\s*built\b", status.group(1)) is not None
    says_unbuilt = re.search(r"\bnot (yet )?built\b|\bunbuilt\b", " ".join(text.split())) is not None
    if built and says_unbuilt:
        errors.append(f"README calls {path} not built; its status says: {status.group(1).strip()}")
    print(f"{path}: status {status.group(1).strip()!r}, README: {' '.join(text.split())!r}")

for e in errors:
    print(f"FAIL: {e}")
print(f"{len(entries)} documents listed, {len(errors)} disagreements")
sys.exit(1 if errors else 0)
