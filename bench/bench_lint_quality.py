"""Quality (and speed) of the unsourced-claim lint engine, `factreg.docs.lint`.

Quality: precision, recall and F1 against the labelled corpus tests/data/lint_corpus.jsonl, for the whole corpus,
its held-out part (never looked at while the rules were tuned), each language, and the sentences written after the
engine. Matching is claim-level by span overlap (see tests/lint_support.py).

Speed: `lint_text` over generated Markdown files (corpus sentences mixed with claim-free prose, code blocks and
citation markers), CPU time in-process, against `grep -rEc` with a number-plus-unit pattern over the same files.

Prints the figures and writes bench/results/lint.md (assembled into docs/performance.md by run_all.py).
Run: `python bench/bench_lint_quality.py [--files N]` (default 2,000 files, about 11 MB; `--files 0` skips speed).
"""

from __future__ import annotations

import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import machine, write_section  # noqa: E402

from factreg.docs.lint import lint_text  # noqa: E402
from tests.lint_support import Score, load, score  # noqa: E402

GREP_PATTERN = r"[0-9]+(\.[0-9]+)?[ ]?(ms|s|sec|seconds|tok/s|t/s|tokens/s|×|x faster|초|밀리초|배)([^A-Za-z0-9]|$)"
FILLER = [
    "The voice assistant runs on local LLM servers behind a gateway; this runbook says how to restart them.",
    "음성 비서는 게이트웨이 뒤의 로컬 LLM 서버에서 돌아가며, 이 런북은 서버를 재시작하는 방법을 설명한다.",
    "Check the health endpoint, then confirm the served model matches the decision record before any timing.",
    "## Restart procedure",
    "```bash\nllama-server -m model.gguf -ngl 99 -c 8192 --port 8080\ncurl -s localhost:8080/health  # 5 ms\n```",
    "- step 2: wait until /health says ok, then run `llama-bench -r 5`",
    "Measured: <!-- fact: gamebox/a3b/tg32 -->11.9 ± 7.2 tok/s<!-- /fact --> on this machine.",
]
# The first scoring of the 75 sentences written after the engine, before anything was changed for them.
FIRST_UNSEEN = "precision 0.969 (2 false positives of 65 predictions), recall 1.000 (63 of 63 claims)"


def quality() -> list[tuple[str, Score]]:
    rows = load()
    parts = [
        ("full corpus", rows),
        ("held-out split", [r for r in rows if r["split"] == "heldout"]),
        ("dev split", [r for r in rows if r["split"] == "dev"]),
        ("English", [r for r in rows if r["lang"] == "en"]),
        ("Korean", [r for r in rows if r["lang"] == "ko"]),
        ("written after the engine", [r for r in rows if "after the engine" in r.get("note", "")]),
    ]
    return [(name, score(sel)) for name, sel in parts]


def make_docs(root: Path, n: int) -> tuple[list[Path], int]:
    rnd = random.Random(26)
    sentences = [r["text"] for r in load()]
    paths, total = [], 0
    for i in range(n):
        folder = root / f"d{i % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        parts, size = [f"---\ntitle: doc {i}\n---\n# Doc {i}\n"], 0
        while size < 5300:
            line = rnd.choice(sentences) if rnd.random() < 0.3 else rnd.choice(FILLER)
            parts.append(line)
            size += len(line.encode())
        data = ("\n\n".join(parts) + "\n").encode("utf-8")
        path = folder / f"doc{i:05d}.md"
        path.write_bytes(data)
        paths.append(path)
        total += len(data)
    return paths, total


def speed(n_files: int, repeat: int = 3) -> str:
    work = Path(tempfile.mkdtemp(prefix="factreg-lint-bench-"))
    try:
        paths, total = make_docs(work / "tree", n_files)
        lint_cpu, grep_wall, findings = [], [], 0
        for _ in range(repeat):
            t0 = time.process_time()
            findings = 0
            for p in paths:
                findings += len(lint_text(p.read_text(encoding="utf-8"), str(p)))
            lint_cpu.append(time.process_time() - t0)
            t0 = time.perf_counter()
            subprocess.run(["grep", "-rEc", GREP_PATTERN, str(work / "tree")], stdout=subprocess.DEVNULL, check=False)
            grep_wall.append(time.perf_counter() - t0)
        mb = total / 1e6
        lint_med, grep_med = statistics.median(lint_cpu), statistics.median(grep_wall)
        return (
            f"- {n_files:,} generated Markdown files, {mb:.1f} MB (30% corpus sentences, the rest prose, fenced code,"
            f" citation markers, front matter); {findings:,} findings. Run {repeat}×, medians.\n"
            f"- `lint_text` (reading included), CPU time in-process: **{lint_med:.2f} s** "
            f"({mb / lint_med:.1f} MB/s).\n"
            f"- `grep -rEc` with a number-plus-unit pattern, wall time: {grep_med:.2f} s "
            f"(ratio {lint_med / grep_med:.1f}×). grep only finds unit-looking strings; the engine also skips code,"
            f" comments, markers and front matter and tells claims from clock times, counts and hardware.\n"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    n_files = 2000
    if "--files" in sys.argv:
        n_files = int(sys.argv[sys.argv.index("--files") + 1])
    results = quality()
    lines = [
        "| part | sentences | with claims | labelled claims | predicted | precision | recall | F1 | exact spans |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in results:
        lines.append(
            f"| {name} | {s.sentences} | {s.with_claims} | {s.labels} | {s.predictions} | {s.precision:.3f} "
            f"| {s.recall:.3f} | {s.f1:.3f} | {s.exact}/{s.labels} |"
        )
    table = "\n".join(lines)
    print(table)
    errors = results[0][1].errors
    for e in errors:
        print(f"  miss/extra: {e['text']!r} want {e['want']} got {e['got']}")
    speed_text = ""
    if n_files > 0:
        speed_text = speed(n_files)
        print(speed_text)
    doc = (
        "## Lint: unsourced-claim detection\n\n"
        f"Machine: {machine()}.\n\n"
        "Corpus: `tests/data/lint_corpus.jsonl`, English and Korean sentences in the voice of the case study "
        "(runbooks, skill docs, bench tables, llama-server logs), each labelled with the exact claims it holds; "
        "a third (by a hash of the text) is held out and was not looked at while the rules were tuned. "
        "Matching is by span overlap: a predicted claim is right when it overlaps a labelled one, a label is found "
        "when a prediction overlaps it; 'exact spans' counts predictions with exactly the labelled start and end.\n\n"
        f"{table}\n\n"
        f"The 75 sentences 'written after the engine' were first scored unseen: {FIRST_UNSEEN}; "
        "one rule was added after that (`keep-alive` is a setting). The labels and the rules come from the same "
        "written policy (module docstring of `factreg/docs/lint.py`), so the held-out figure measures the rules "
        "against that policy; the first unseen scoring is the better guess for prose written by others.\n\n"
        + (
            "Remaining disagreements:\n\n"
            + "".join(f"- `{e['text']}`: wanted {e['want']}, found {e['got']}\n" for e in errors)
            + "\n"
            if errors
            else ""
        )
        + ("### Speed\n\n" + speed_text if speed_text else "")
    )
    out = write_section("lint", doc)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
