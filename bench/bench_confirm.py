"""Does `verify` confirm what is true, and refute a claim 20% off, on this shared machine?

`--cycles` times, one cycle every `--every` seconds, each in a fresh registry: `factreg bench` with the tiny model
and the defaults (llama-bench repeated until the fact's interval is within ±5%, `measure/precision.py`), then
`--gap` seconds later `factreg verify` of that fact, and of a copy whose samples are 20% above it (a claim 20%
above the real rate on an unchanged machine). Verdicts, the looks and the time each verify took are written as
JSON lines next to the Markdown.

Run: python bench/bench_confirm.py [--cycles 10] [--gap 20] [--every 120]   (≥ 20 minutes for 10 cycles)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS, machine  # noqa: E402

BENCH = ["-p", "0", "-n", "32", "-r", "5", "-t", "1"]


def main() -> None:
    import subprocess

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=10)
    parser.add_argument("--gap", type=float, default=20.0)
    parser.add_argument("--every", type=float, default=120.0)
    parser.add_argument("--out", type=Path, default=RESULTS / "confirm.md")
    opts = parser.parse_args()
    from factreg.demo.tinymodel import write_tiny_model

    def factreg(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "factreg", *args], capture_output=True, text=True, env=env,
                              cwd=cwd)  # fmt: skip

    rows = []
    started = time.monotonic()
    opts.out.parent.mkdir(exist_ok=True)
    opts.out.with_suffix(".jsonl").write_text("", encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        model = write_tiny_model(Path(tmp) / "tiny.gguf")
        for cycle in range(opts.cycles):
            t0 = time.monotonic()
            work = Path(tmp) / f"c{cycle}"
            work.mkdir()
            env = {**os.environ, "FACTREG_DB": str(work / "registry.db"), "FACTREG_USER_DIR": str(work / "user"),
                   "FACTREG_HOSTNAME": "benchhost"}  # fmt: skip
            r = factreg("bench", "--json", "--", "-m", str(model), *BENCH, env=env, cwd=work)
            if r.returncode != 0:
                raise SystemExit(r.stderr)
            [fact] = json.loads(r.stdout)
            # The claim: the same fact 20% faster, with the same llama-bench method (recorded here, so trusted).
            from factreg.registry import facts
            from factreg.registry.facts import NewFact
            from factreg.registry.store import Registry

            reg = Registry(f"sqlite:///{work / 'registry.db'}")
            facts.record(reg, NewFact(id="benchhost/claim", metric=fact["metric"],
                                      samples=[x * 1.2 for x in fact["samples"]],
                                      identity=fact["conditions"]["identity"], info=fact["conditions"]["info"],
                                      method=fact["method"]))  # fmt: skip
            reg.close()
            time.sleep(opts.gap)
            out = {"cycle": cycle, "fact_n": fact["n"], "fact_flags": fact["flags"],
                   "precision": fact["conditions"]["info"].get("precision"), "load1": os.getloadavg()[0]}  # fmt: skip
            for name, fid in (("true", fact["id"]), ("claim +20%", "benchhost/claim")):
                t = time.monotonic()
                res = factreg("verify", fid, "--json", env=env, cwd=work)
                took = time.monotonic() - t
                try:
                    [v] = json.loads(res.stdout)
                except ValueError:
                    v = {"verdict": f"exit {res.returncode}", "message": res.stderr[-300:]}
                out[name] = {"verdict": v["verdict"], "message": v.get("message"), "seconds": round(took, 2),
                             "sequential": v.get("sequential"), "decided_by": v.get("decided_by"),
                             "relative": (v.get("relative") or {}).get("verdict")}  # fmt: skip
            rows.append(out)
            with opts.out.with_suffix(".jsonl").open("a", encoding="utf-8") as log:  # as it goes: a long run
                log.write(json.dumps(out) + "\n")
            print(f"cycle {cycle}: true {out['true']['verdict']}, claim {out['claim +20%']['verdict']}, "
                  f"fact n={fact['n']} {fact['flags']}", file=sys.stderr)  # fmt: skip
            time.sleep(max(0.0, opts.every - (time.monotonic() - t0)))
    wall = time.monotonic() - started
    true = Counter(r["true"]["verdict"] for r in rows)
    claim = Counter(r["claim +20%"]["verdict"] for r in rows)
    lines = [
        "## Confirming what is true on this shared machine (`bench/bench_confirm.py`)",
        "",
        f"{len(rows)} cycles over {wall / 60:.0f} minutes on {machine()}: `factreg bench -- -m tiny.gguf "
        f"{' '.join(BENCH)}` with the defaults (repeated until ±5%), `verify` {opts.gap:g} s later; then `verify` of a "
        "claim 20% above the same samples, with the same method.",
        "",
        "| | confirmed | inconclusive | refuted | other |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, c in (("the fact as measured", true), ("a claim 20% above it", claim)):
        other = sum(v for k, v in c.items() if k not in ("confirmed", "inconclusive", "refuted"))
        lines.append(f"| {name} | {c['confirmed']} | {c['inconclusive']} | {c['refuted']} | {other} |")
    lines += ["", "| cycle | load | fact n | flags | verify (s) | spent / budget (s) | verdict | looks | claim +20% "
              "| its spent / budget (s) |", "|---:|---:|---:|---|---:|---|---|---:|---|---|"]

    def looks(v: dict) -> str:
        seq = v.get("sequential") or {}
        runs = " (2 runs)" if seq.get("first_run") else ""
        return f"{seq.get('spent_s')} / {seq.get('budget_s')}{runs}"

    for r in rows:
        seq = r["true"].get("sequential") or {}
        claim_v = r["claim +20%"]
        lines.append(f"| {r['cycle']} | {r['load1']:.1f} | {r['fact_n']} | {', '.join(r['fact_flags']) or '—'} "
                     f"| {r['true']['seconds']} | {looks(r['true'])} "
                     f"| {r['true']['verdict']}{' (relative)' if r['true'].get('decided_by') else ''} "
                     f"| {seq.get('looks')} | {claim_v['verdict']}{' (relative)' if claim_v.get('decided_by') else ''} "
                     f"| {looks(claim_v)} |")
    opts.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(opts.out)


if __name__ == "__main__":
    main()
