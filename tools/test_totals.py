"""Add up the behave and Robot results and print `tests: N passed, M failed`.

Exits 1 when anything failed or when no test ran at all (a missing report counts as
nothing run), so CI cannot pass on an empty run.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

REPORTS = Path(__file__).resolve().parent.parent / "reports"


def _suites(path: Path) -> list[ET.Element]:
    return list(ET.parse(path).getroot().iter("testsuite"))  # the root itself included


def totals(reports: Path) -> tuple[int, int]:
    """Passed and failed (failures plus errors) test cases over every JUnit report."""
    passed = failed = 0
    for path in sorted(reports.glob("*/*.xml")):
        if path.name in {"output.xml"}:
            continue
        for suite in _suites(path):
            if suite.find("testsuite") is not None:
                continue  # counted through its leaf suites
            tests = int(suite.get("tests", 0))
            broken = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            skipped = int(suite.get("skipped", 0))
            failed += broken
            passed += tests - broken - skipped
    return passed, failed


def main() -> int:
    passed, failed = totals(REPORTS)
    print(f"tests: {passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
