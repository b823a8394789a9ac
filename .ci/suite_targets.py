#!/usr/bin/python3
"""Print the ninja targets the tests of one meson suite need (their programs, the
build-tree files on their command lines, the targets they depend on), so that
`make test-emu` builds only those in the emulation tree instead of everything.

usage: suite_targets.py BUILD_DIR SUITE"""
import json
import os
import sys

build, suite = os.path.abspath(sys.argv[1]), sys.argv[2]
with open(os.path.join(build, "meson-info", "intro-tests.json"), encoding="utf-8") as f:
    tests = json.load(f)
with open(os.path.join(build, "meson-info", "intro-targets.json"), encoding="utf-8") as f:
    outputs = {t["id"]: t["filename"] for t in json.load(f)}

targets = set()
for t in tests:
    if not any(s == suite or s.endswith(":" + suite) for s in t["suite"]):
        continue
    files = list(t["cmd"])
    for dep in t.get("depends", []):
        files += outputs.get(dep, [])
    for path in files:
        path = os.path.abspath(path)
        if path.startswith(build + os.sep):
            targets.add(os.path.relpath(path, build))
print("\n".join(sorted(targets)))
