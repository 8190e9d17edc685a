"""The lint reads a thin space (U+2009) and a narrow no-break space (U+202F) as it did before it translated them to
no-break spaces (vocab.MATCHABLE): every sentence of the labelled corpora, with its spaces made thin, narrow,
no-break or a random mix of the four, linted by this tree, as JSON lines on stdout. Run it in two trees and compare
the outputs (`cmp`):

    python bench/lint_thin_spaces.py > new.jsonl
    (cd OTHER_TREE && PYTHONPATH=. python ../THIS/bench/lint_thin_spaces.py) > old.jsonl
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
CORPORA = ["lint_corpus.jsonl", "claims-real/corpus.jsonl", "claims-real/final31.jsonl",
           "claims-real/final32.jsonl", "claims-real/final33.jsonl"]
SPACES = (" ", "\u2009", "\u202f", "\u00a0")


def variants(text: str, rnd: random.Random) -> list[str]:
    mixed = "".join(rnd.choice(SPACES) if c == " " else c for c in text)
    return [text, *(text.replace(" ", sp) for sp in SPACES[1:]), mixed]


def main() -> int:
    from factreg.docs.lint import lint_text

    rnd = random.Random(2009)
    n = 0
    for name in CORPORA:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            text = json.loads(line)["text"]
            for variant in variants(text, rnd):
                found = lint_text(variant + "\n", "x.md", targets=True)
                print(json.dumps([[f.line, f.col, f.text, f.value, f.unit, f.kind, f.rule] for f in found],
                                 ensure_ascii=False))
                n += 1
    print(f"{n} documents linted", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
