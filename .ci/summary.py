#!/usr/bin/python3
"""Print one closing line over the meson test logs of the given build dirs:
'check: N passed, N failed, N skipped' (counts test programs in every build)."""
import json
import sys

passed = failed = skipped = 0
for build in sys.argv[1:]:
    try:
        with open(f"{build}/meson-logs/testlog.json", encoding="utf-8") as f:
            for line in f:
                result = json.loads(line).get("result")
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    except FileNotFoundError:
        failed += 1
        print(f"summary: no test log in {build}", file=sys.stderr)
print(f"check: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
