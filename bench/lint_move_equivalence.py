"""The move of the lint into named rules (issue 31) changes no finding of the default set but on purpose: the two
10,000-file trees of bench/bench_docs.py (dense and runbook-like, the same seed) and the real-sentence corpus are
linted with the lint as it was before the move (the single module, from git: `--before REV`, default `main`) and
with the package, with `--targets`; the findings are compared apart from `rule`, and the differences (if any) are
listed by rule. Run: `python bench/lint_move_equivalence.py [--before REV] [--quick]`.
"""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench_docs import make_tree  # noqa: E402

from factreg.docs.lint import lint_text  # noqa: E402
from factreg.docs.lint.rules import selected  # noqa: E402


def old_lint(rev: str):  # type: ignore[no-untyped-def]
    """The single-module lint as it was at `rev`, loaded under another name."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:factreg/docs/lint.py"], capture_output=True, text=True, check=True
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="factreg-old-lint-")) / "old_lint.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_lint", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare(texts: list[tuple[str, str]], old) -> tuple[int, Counter, list[str]]:  # type: ignore[no-untyped-def]
    default = selected()
    n = 0
    diffs: Counter = Counter()
    shown: list[str] = []
    for name, text in texts:
        before = [(f.line, f.col, f.text, f.value, f.unit, f.kind) for f in old.lint_text(text, targets=True)]
        after_all = lint_text(text, targets=True)
        after = [(f.line, f.col, f.text, f.value, f.unit, f.kind) for f in after_all if f.rule in default]
        n += len(before)
        if before != after:
            gone = [b for b in before if b not in after]
            new = [a for a in after if a not in before]
            rule_of = {(f.line, f.col, f.text, f.value, f.unit, f.kind): f.rule for f in after_all}
            for g in gone:
                diffs[f"left out: {rule_of.get(g, '?')}"] += 1
            for a in new:
                diffs[f"added: {rule_of.get(a, '?')}"] += 1
            if len(shown) < 20:
                shown.append(f"{name}: left out {gone[:3]}, added {new[:3]}")
    return n, diffs, shown


def main() -> None:
    rev = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else "main"
    n_files = 1_000 if "--quick" in sys.argv else 10_000
    old = old_lint(rev)
    rnd = random.Random(26)  # bench_docs.py's seed: the same trees
    with tempfile.TemporaryDirectory(prefix="factreg-lint-move-") as tmp:
        for label, share in (("dense", 0.27), ("runbook-like", 0.03)):
            tree = Path(tmp) / f"tree-{label}"
            make_tree(tree, n_files, f"sqlite:///{tmp}/docs-{label}.db", rnd, share)
            texts = [(str(p.relative_to(tree)), p.read_text(encoding="utf-8")) for p in sorted(tree.rglob("*.md"))]
            n, diffs, shown = compare(texts, old)
            print(f"{label}: {len(texts):,} files, {n:,} findings before; differences: {dict(diffs) or 'none'}")
            for line in shown:
                print("   ", line)
    rows = [json.loads(line) for line in (ROOT / "tests/data/claims-real/corpus.jsonl").read_text().splitlines()]
    n, diffs, shown = compare([(r["id"], r["text"] + "\n") for r in rows], old)
    print(f"real corpus: {len(rows):,} sentences, {n:,} findings before; differences: {dict(diffs) or 'none'}")
    for line in shown:
        print("   ", line)


if __name__ == "__main__":
    main()
