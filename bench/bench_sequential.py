"""Error rates of verification, simulated: one look, sequential looks with a shared α, and naive repeated tests.

For each noise shape (normal; log-normal) and coefficient of variation (3–25%), 10,000 runs per case:

- the fact is recorded as `bench` records it (`measure/precision.py`): batches of 5 samples at 100 until its 95%
  interval is within ±5%, at most 5 batches (the first and a budget of 4×);
- it is verified in batches of 5 at 100 × (1 + truth), judged by factreg's own `judge.compare` (refuted: Welch
  significant and outside ±10%; confirmed: equivalent within ±10% by two one-sided tests), the way `verify` does:
  - **one look**: a single batch at α = 0.05;
  - **sequential**: up to 6 looks (`measure/sequential.py`), each at its Pocock-type share of α = 0.05;
  - **naive**: the same 6 looks, each at α = 0.05 (what repeated testing without spending does);
- truth 0 (the fact holds): how often it is wrongly refuted, and how often it is decided at all;
  truth +20% (twice the tolerance off): how often it is wrongly confirmed.

Run: python bench/bench_sequential.py [--runs 10000] — writes bench/results/sequential.md (about 5 minutes).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RESULTS, machine  # noqa: E402

from factreg.measure import judge as judging  # noqa: E402
from factreg.measure import precision, sequential  # noqa: E402

TOL, ALPHA, BATCH, LOOKS = 0.10, 0.05, 5, 6
CVS = (0.03, 0.08, 0.15, 0.25)
SHAPES = ("normal", "log-normal")


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def draw(rng: random.Random, shape: str, mean: float, cv: float, n: int) -> list[float]:
    if shape == "normal":
        return [rng.gauss(mean, mean * cv) for _ in range(n)]
    sigma = math.sqrt(math.log(1 + cv * cv))
    mu = math.log(mean) - sigma * sigma / 2
    return [rng.lognormvariate(mu, sigma) for _ in range(n)]


def one_run(rng: random.Random, shape: str, cv: float, truth: float, mode: str) -> str:
    clock = Clock()

    def batch() -> list[float]:
        clock.t += 1.0
        return draw(rng, shape, 100.0, cv, BATCH)

    fact, _ = precision.until_precise(batch, precision.half_width, lambda a, b: a + b, TOL / 2, budget=4,
                                      clock=clock)  # fmt: skip
    old = judging.new_side(fact, None, None, None)
    assert old is not None

    def measure(ids):
        clock.t += 1.0
        return {i: draw(rng, shape, 100.0 * (1 + truth), cv, BATCH) for i in ids}

    def judge(_fid, xs, alpha):
        new = judging.new_side(xs, None, None, None)
        return judging.compare(old, new, TOL, ALPHA if mode == "naive" else alpha)

    planned = 1 if mode == "one look" else LOOKS
    verdicts, _, _ = sequential.run(["f"], measure, judge, pool=lambda a, b: a + b,
                                    more=lambda o: o.verdict == "inconclusive" and o.needed_n is not None,
                                    size=len, alpha=ALPHA, planned=planned, budget=LOOKS - 1, clock=clock)  # fmt: skip
    return str(verdicts["f"].verdict)


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def pct(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{100 * k / n:.2f}% [{100 * lo:.2f}–{100 * hi:.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20261201)
    opts = parser.parse_args()
    started = time.monotonic()
    rows = []
    for shape in SHAPES:
        for cv in CVS:
            row = {"shape": shape, "cv": cv}
            for mode in ("one look", "sequential", "naive"):
                rng = random.Random(f"{opts.seed}-{shape}-{cv}-{mode}")
                held = [one_run(rng, shape, cv, 0.0, mode) for _ in range(opts.runs)]
                off = [one_run(rng, shape, cv, 2 * TOL, mode) for _ in range(opts.runs)]
                row[mode] = {
                    "refuted_true": held.count("refuted"), "confirmed_true": held.count("confirmed"),
                    "confirmed_off": off.count("confirmed"), "refuted_off": off.count("refuted"),
                }  # fmt: skip
            rows.append(row)
            print(f"{shape} cv {cv}: done", file=sys.stderr)
    n = opts.runs
    lines = [
        "## Verdicts simulated: one look, sequential looks, naive repeated tests (`bench/bench_sequential.py`)",
        "",
        f"{n:,} runs per case and method, seed {opts.seed}, {time.monotonic() - started:.0f} s on {machine()}.",
        "Each fact is recorded as `bench` records it (batches of 5 until its 95% interval is within ±5%, at most 5",
        "batches), then verified in batches of 5 by factreg's own `judge.compare` (tolerance ±10%, α = 0.05):",
        "one batch at α; up to 6 looks each at its Pocock-type share of α (`measure/sequential.py`); or up to 6",
        "looks each at α (naive). Wilson 95% intervals in brackets.",
        "",
        "**The fact holds (truth 0): refuted — must stay ≤ 5%.**",
        "",
        "| noise | CV | one look | sequential | naive |",
        "|---|---:|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['shape']} | {r['cv']:.0%} | " + " | ".join(
            pct(r[m]["refuted_true"], n) for m in ("one look", "sequential", "naive")) + " |")
    lines += ["", "**The fact is 2× the tolerance off (truth +20%): confirmed — must stay ≤ 5%.**", "",
              "| noise | CV | one look | sequential | naive |", "|---|---:|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['shape']} | {r['cv']:.0%} | " + " | ".join(
            pct(r[m]["confirmed_off"], n) for m in ("one look", "sequential", "naive")) + " |")
    lines += ["", "**Decided within the budget when the fact holds (confirmed or refuted, truth 0).**", "",
              "| noise | CV | one look | sequential | naive |", "|---|---:|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['shape']} | {r['cv']:.0%} | " + " | ".join(
            pct(r[m]["confirmed_true"] + r[m]["refuted_true"], n) for m in ("one look", "sequential", "naive"))
            + " |")
    out = RESULTS / "sequential.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(out)


if __name__ == "__main__":
    main()
