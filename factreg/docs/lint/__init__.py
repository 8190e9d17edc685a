"""Unsourced claims: performance numbers in documents that cite no fact (`factreg docs lint`).

The lint is a set of named rules (`factreg.docs.lint.rules`: an id such as FR101, a name, a doc, its decision and
its examples), one module per family of numbers. What a claim is, and what is not one, is written once, in the
rules; `docs/lint-rules.md`, `factreg docs lint --explain ID` and the policy tests are generated from them.
Nothing is compiled when this package is imported: each pattern is compiled on its first use
(`factreg.docs.lint.patterns`).

Quality on real sentences by other authors: bench/lint_real.py, results in docs/performance.md.
"""

from __future__ import annotations

from factreg.docs.findings import Finding
from factreg.docs.lint.engine import lint_documents, lint_file, lint_paths, lint_text

__all__ = ["Finding", "lint_documents", "lint_file", "lint_paths", "lint_text"]
