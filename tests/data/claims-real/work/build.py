"""Build ../corpus.jsonl from the labelled candidate files in this folder.

Each `NAME.cands` holds candidate sentences, one a line: `source URL<TAB>title<TAB>text` (copied from the source).
Each `NAME.labels` picks some of them by line number (1-based): `n<TAB>kind<TAB>spans<TAB>note`, where kind is
C (a claim), T (a target or setting, no claim) or N (no claim); spans are exact substrings of the text separated by
` ;; `; a span written `T:...` is a target's number (recorded as `targets`, not as a claim).
Each `tables_*.tsv` gives, for sentences that are table rows, the header row of the table in its source (read there
by a hand that never ran the lint): `id<TAB>how<TAB>header`, how one of `markdown` (the header line as written),
`html` (an HTML table's header cells written as one pipe row), `code` (a table inside a code block or pasted tool
output; header as written, or empty), `none` (not a table row, or a table without a header) and `unreadable` (the
source could not be read). Rows with a header get `table` (how) and `header` fields; the others `table` only. An
optional fourth field, `caption`, is the heading, caption or note line right above or below the table in its source
(quoted exactly) when it names the table's unit or what it measured (`Throughput in MB/s, higher is better`); a row
with one gets a `caption` field, placed above its table when the lint reads it (bench/lint_real.document).
`final32/` holds issue 31's second final batch the same way (its own `.cands`, `.labels` and `tables_final32.tsv`);
`--final` builds ../final32.jsonl from it (split `final32`), never ../corpus.jsonl; `--final final33` builds the next
final batch, from `final33/`, into ../final33.jsonl.
Run: python tests/data/claims-real/work/build.py [--final [NAME]] [--out PATH] [--quiet]
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "corpus.jsonl"
FINAL = HERE / "final32"  # the final batch of issue 31 (scored once, with the final rules): ../final32.jsonl
HANGUL = re.compile(r"[\uac00-\ud7a3]")
KINDS = {"C": "claim", "T": "target", "N": "none"}
# Later batches, oldest first: every sentence of a label file named `BATCH_*.labels`. The last is the newest, kept
# for scoring rules that never saw it (bench/lint_real.py); every earlier one has been scored and may be tuned on.
LATER = ("fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6")
NEWEST = LATER[-1]
SPLITS = ("tune", "unseen", *LATER)
TABLE_HOW = ("markdown", "html", "code", "none", "unreadable")


def split_of(id_: str, labels: str = "") -> str:
    """The batch (`fresh` … `fresh6`) of every sentence of a `BATCH_*` label file (later batches, each labelled before
    the rules it measures were last changed, and scored once); else `unseen` for a third of the ids (by hash), `tune`
    for the rest."""
    if labels.startswith(tuple(f"{batch}_" for batch in LATER)):
        return labels.split("_", 1)[0]
    return "unseen" if int(hashlib.sha256(id_.encode()).hexdigest(), 16) % 3 == 0 else "tune"


def build(folder: Path = HERE, batch: str | None = None) -> tuple[list[dict], list[str]]:
    """The corpus rows of the label files in `folder`, sorted by id, and the problems found in them; with `batch`,
    every row's split is `batch`."""
    rows: list[dict] = []
    seen: dict[str, str] = {}
    errors: list[str] = []
    for labels in sorted(folder.glob("*.labels")):
        cands = labels.with_suffix(".cands").read_text(encoding="utf-8").splitlines()
        for ln, line in enumerate(labels.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            parts += [""] * (4 - len(parts))
            n, kind, spans_s, note = parts[0], parts[1], parts[2], parts[3]
            where = f"{labels.name}:{ln}"
            try:
                url, title, text = cands[int(n) - 1].split("\t", 2)
            except (ValueError, IndexError):
                errors.append(f"{where}: no candidate {n!r}")
                continue
            spans = [s.strip() for s in spans_s.split(" ;; ") if s.strip()]
            claims = [s for s in spans if not s.startswith("T:")]
            targets = [s[2:] for s in spans if s.startswith("T:")]
            if kind not in KINDS:
                errors.append(f"{where}: kind {kind!r}")
                continue
            if (kind == "C") != bool(claims):
                errors.append(f"{where}: kind {kind} with claim spans {claims}")
            if kind == "N" and targets:
                errors.append(f"{where}: kind N with target spans")
            for s in claims + targets:
                if s not in text:
                    errors.append(f"{where}: span {s!r} not in {text!r}")
            lang = "ko" if HANGUL.search(text) else "en"
            id_ = f"{lang}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:12]}"
            if id_ in seen:
                if seen[id_] != f"{kind}|{claims}":
                    errors.append(f"{where}: same text labelled differently elsewhere: {text!r}")
                continue
            seen[id_] = f"{kind}|{claims}"
            row = {
                "id": id_,
                "lang": lang,
                "text": text,
                "source": url,
                "title": title,
                "kind": KINDS[kind],
                "claim": kind == "C",
                "spans": claims,
                "targets": targets,
                "split": batch or split_of(id_, labels.name),
            }
            if note.strip():
                row["note"] = note.strip()
            rows.append(row)
    rows.sort(key=lambda r: r["id"])
    errors += add_headers(rows, sorted(folder.glob("tables_*.tsv")))
    return rows, errors


def add_headers(rows: list[dict], paths: list[Path]) -> list[str]:
    """Attach the table headers of the `tables_*.tsv` files to their rows; return the problems found."""
    by_id = {r["id"]: r for r in rows}
    errors: list[str] = []
    for path in paths:
        for ln, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            where = f"{path.name}:{ln}"
            parts = line.split("\t")
            if len(parts) not in (3, 4):
                errors.append(f"{where}: {len(parts)} fields, not 3 or 4")
                continue
            id_, how, header = parts[0], parts[1], parts[2].strip()
            caption = parts[3].strip() if len(parts) == 4 else ""
            row = by_id.get(id_)
            if row is None:
                errors.append(f"{where}: no sentence {id_!r}")
            elif "table" in row:
                errors.append(f"{where}: {id_} given twice")
            elif how not in TABLE_HOW:
                errors.append(f"{where}: how {how!r}")
            elif bool(header) != (how in ("markdown", "html") or (how == "code" and bool(header))):
                errors.append(f"{where}: a header with how {how!r}" if header else f"{where}: no header")
            elif header and not header.strip().startswith("|") and "|" not in header:
                errors.append(f"{where}: header {header!r} is not a pipe row")
            else:
                row["table"] = how
                if header:
                    row["header"] = header
                if caption:
                    row["caption"] = caption
    return errors


def render(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main(argv: list[str]) -> int:
    final = "--final" in argv
    i = argv.index("--final") + 1 if final else 0
    name = argv[i] if final and i < len(argv) and argv[i].startswith("final") else "final32"
    default_out = HERE.parent / f"{name}.jsonl" if final else OUT
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else default_out
    rows, errors = build(HERE / name, name) if final else build()
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    out.write_text(render(rows), encoding="utf-8")
    if "--quiet" in argv:
        return 0
    for lang in ("en", "ko"):
        sel = [r for r in rows if r["lang"] == lang]
        for split in (name,) if final else SPLITS:
            s = [r for r in sel if r["split"] == split]
            print(f"{lang} {split}: {len(s)} sentences, {sum(r['claim'] for r in s)} with claims, "
                  f"{sum(len(r['spans']) for r in s)} claim spans, {sum(r['kind'] == 'target' for r in s)} targets")
    print(f"total {len(rows)} -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
