#!/usr/bin/env python3
"""Write a mutant crate: the reference solution with textual edits applied.

Usage: make_mutant.py PROBLEM_DIR NAME EDITS.json
EDITS.json is a list of [old, new] pairs; each `old` must occur exactly once
in the reference's src/lib.rs. The result is a normal crate under
PROBLEM_DIR/mutants/NAME that is committed like any other source: this
script only saves typing when a mutant is a small change of the reference.
"""
import json, pathlib, re, sys

problem_dir, name, edits_file = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
edits = json.loads(pathlib.Path(edits_file).read_text())
ref = problem_dir / "reference"
src = (ref / "src" / "lib.rs").read_text()
for old, new in edits:
    n = src.count(old)
    if n != 1:
        sys.exit(f"{name}: expected exactly one occurrence of {old!r}, found {n}")
    src = src.replace(old, new)
src = src.replace("//! Reference solution", f"//! MUTANT `{name}` (a deliberately wrong solution) of the reference solution", 1)
src = src.replace(", oracle);", ");")
out = problem_dir / "mutants" / name
(out / "src").mkdir(parents=True, exist_ok=True)
(out / "src" / "lib.rs").write_text(src)
manifest = (ref / "Cargo.toml").read_text()
manifest = re.sub(r'name = "([a-z_]+)_reference"', lambda m: f'name = "{m.group(1)}_mutant_{name}"', manifest, count=1)
manifest = manifest.replace('path = "../../../contract"', 'path = "../../../../contract"')
assert '../../../../contract' in manifest, "the reference must depend on harness-contract by path"

(out / "Cargo.toml").write_text(manifest)
print(out)
