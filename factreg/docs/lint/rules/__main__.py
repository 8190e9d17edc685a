"""`python -m factreg.docs.lint.rules`: print docs/lint-rules.md."""

import sys

from factreg.docs.lint.rules import page

sys.stdout.write(page())
