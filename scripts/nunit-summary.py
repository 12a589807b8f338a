#!/usr/bin/env python3
"""Prints the closing line "<N> passed, <M> failed" of an NUnit 2.x TestResult.xml (every
test case, failures and errors listed first) and exits non-zero when any test failed, did
not run, or the file is missing (a crashed test run must not pass)."""
import sys
import xml.etree.ElementTree as ET

path = sys.argv[1]
try:
    root = ET.parse(path).getroot()
except (OSError, ET.ParseError) as e:
    print(f"no readable NUnit result at {path}: {e}")
    print("0 passed, 1 failed")
    sys.exit(1)
passed = failed = 0
for case in root.iter("test-case"):
    if case.get("executed") == "True" and case.get("success") == "True":
        passed += 1
    else:
        failed += 1
        msg = case.find("./*/message")
        text = (msg.text or "").strip().splitlines()[0] if msg is not None and msg.text else case.get("result", "")
        print(f"FAIL {case.get('name')}: {text}")
if passed + failed == 0:
    print("no test ran")
    failed = 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
