"""The lint's equivalence checks on the whole of each corpus: the tests compare the fast and reference paths
(literal pre-tests, the prefilter) on a quarter of each corpus (tests/lint_support.sample); this runs the same tests
with FACTREG_FULL_CORPUS=1, every sentence.

Run: `python bench/lint_equivalence.py` (exit status: pytest's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ["tests/test_lint_speed_equivalence.py", "tests/test_lint_prefilter.py"]

if __name__ == "__main__":
    sys.exit(subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *TESTS, "-k", "corpora"],
                            cwd=ROOT, env={**os.environ, "FACTREG_FULL_CORPUS": "1"}).returncode)
