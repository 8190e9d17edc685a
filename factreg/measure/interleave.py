"""The interleaved control: the machine's speed measured between the measured runs, and every measured sample
judged relative to the control runs on either side of it, so that the machine's drift between runs cancels.

A llama-bench fact is measured as C M C M … M C: a short control run (`measure/control.py`), a measured run, a
control run, and so on (`bench` repeats its measured run until the fact is precise enough,
`measure/precision.py`; every repetition is one **chunk**). A verification measures C M C per batch, and its
sequential looks (`measure/sequential.py`) add batches. Each chunk keeps its sample count, the control value
around it (the geometric mean of the control runs before and after it) and that value's relative standard
error; they are stored as `chunks` in the `control` condition, `[[n, control, rel_se], …]`.

**Control-relative samples**: a rate sample ÷ its chunk's control (a latency × it). Drift between chunks — the
machine 1.4× slower a minute later — moves the measured run and its control together and cancels; drift within
a chunk remains in the samples' own spread. The side's standard deviation is widened by the controls' own
noise (each chunk's control error moves all of its samples alike): the larger of the control runs' own standard
error and the **untracked** noise — how much the chunks' control-relative means differ beyond what their samples
explain, pooled over both sides (`untracked`): on a quiet machine here one control run moved ±10% from the next
while the measured runs beside it did not, and a verification of one chunk cannot see that on its own.

The raw values stay what a fact shows; `speed.adjust` uses the relative comparison to decide what the raw one
cannot (docs/machine.md, "The interleaved control").

Facts recorded before chunks were kept have `parts` (the control before and after the whole run): one chunk
covering every sample. A control lent to a fact by a later verification (`speed.with_baseline`) has neither:
its chunks belong to other samples, so nothing is paired.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factreg.measure.judge import Outcome, Side

KEY = "chunks"
UNKNOWN_SE = 0.10  # the relative standard error of a control run with one sample: its noise is not known


@dataclass(frozen=True)
class Chunk:
    """`n` measured samples in a row, the control value around them, and that value's relative standard error."""

    n: int
    control: float
    rel_se: float

    def as_data(self) -> list[float]:
        return [self.n, round(self.control, 3), round(self.rel_se, 4)]


def run_se(samples: Sequence[float]) -> float:
    """The relative standard error of one control run's mean (UNKNOWN_SE below two samples)."""
    if len(samples) < 2 or not statistics.fmean(samples):
        return UNKNOWN_SE
    return statistics.stdev(samples) / abs(statistics.fmean(samples)) / math.sqrt(len(samples))


def around(before: tuple[float, float] | None, after: tuple[float, float] | None, n: int) -> Chunk | None:
    """The chunk of `n` samples between two control runs, each (value, relative SE); one may be missing (a run
    that failed). None when both are."""
    sides = [s for s in (before, after) if s is not None and s[0] > 0]
    if not sides or n <= 0:
        return None
    if len(sides) == 1:
        return Chunk(n, sides[0][0], sides[0][1])
    (a, sa), (b, sb) = sides
    return Chunk(n, math.sqrt(a * b), math.sqrt(sa**2 + sb**2) / 2)


def chunks_of(ctl: Mapping[str, Any], n_samples: int) -> list[Chunk] | None:
    """The chunks a control condition describes for `n_samples` samples in run order; None when it describes
    none (no control, a borrowed one, or chunks that do not add up to the samples)."""
    raw = ctl.get(KEY)
    if isinstance(raw, list) and raw:
        out: list[Chunk] = []
        for item in raw:
            if not (isinstance(item, list) and len(item) == 3 and all(isinstance(x, (int, float)) for x in item)):
                return None
            n, c, se = item
            if n < 1 or c <= 0 or not math.isfinite(c) or se < 0:
                return None
            out.append(Chunk(int(n), float(c), float(se)))
        total = 0
        for i, chunk in enumerate(out):  # a last chunk whose run was not pooled (its tests differed) is dropped
            total += chunk.n
            if total == n_samples:
                return out[: i + 1]
        return None
    parts = ctl.get("parts")
    if (isinstance(parts, list) and len(parts) == 2 and all(isinstance(x, (int, float)) and x > 0 for x in parts)
            and n_samples > 0):  # fmt: skip
        samples = [float(x) for x in ctl.get("samples") or [] if isinstance(x, (int, float))]
        se = run_se(samples) / math.sqrt(2) if samples else UNKNOWN_SE
        return [Chunk(n_samples, math.sqrt(parts[0] * parts[1]), se)]
    return None


def relative(samples: Sequence[float], ctl: Mapping[str, Any], direction: str | None) -> list[float] | None:
    """Each sample relative to its chunk's control: a rate ÷ the control, a latency × it (None when unpaired)."""
    chunks = chunks_of(ctl, len(samples))
    if chunks is None:
        return None
    out: list[float] = []
    i = 0
    for chunk in chunks:
        k = chunk.control if direction == "lower" else 1 / chunk.control
        out += [float(s) * k for s in samples[i : i + chunk.n]]
        i += chunk.n
    return out


def untracked(*sides: tuple[Sequence[float], Mapping[str, Any], str | None]) -> float:
    """How much a chunk's control moves that its measured run does not follow, as a variance of ln: the spread of
    the chunks' control-relative means beyond what their own samples explain, pooled over every side (samples,
    control, direction) with two chunks or more. Drift that the measured runs follow leaves the relative means
    alike and counts nothing; a control run that happened to be slow counts in full. 0 when no side has two
    chunks."""
    total, dof = 0.0, 0
    for samples, ctl, direction in sides:
        chunks = chunks_of(ctl, len(samples))
        rel = relative(samples, ctl, direction)
        if chunks is None or rel is None or len(chunks) < 2:
            continue
        logs, within = [], []
        i = 0
        for chunk in chunks:
            xs = rel[i : i + chunk.n]
            i += chunk.n
            m = statistics.fmean(xs)
            if m <= 0:
                return 0.0
            logs.append(math.log(m))
            within.append((statistics.stdev(xs) / m) ** 2 / len(xs) if len(xs) > 1 else 0.0)
        excess = statistics.variance(logs) - statistics.fmean(within)
        total += max(0.0, excess) * (len(logs) - 1)
        dof += len(logs) - 1
    return total / dof if dof else 0.0


def side(samples: Sequence[float], ctl: Mapping[str, Any], direction: str | None, noise: float = 0.0
         ) -> Side | None:  # fmt: skip
    """The control-relative side of a comparison, its sd widened by the controls' own noise: each chunk's control
    value is off by its samples' standard error, or by the `untracked` noise (a variance of ln), whichever is
    larger (None when unpaired or below two samples)."""
    from factreg.measure.judge import Side

    rel = relative(samples, ctl, direction)
    chunks = chunks_of(ctl, len(samples))
    if rel is None or chunks is None or len(rel) < 2:
        return None
    n = len(rel)
    mean, sd = statistics.fmean(rel), statistics.stdev(rel)
    control_var = mean**2 * sum((c.n / n) ** 2 * max(c.rel_se**2, noise) for c in chunks)  # of the mean
    return Side(mean, math.sqrt(sd**2 + n * control_var), n)


def pooled(a: Mapping[str, Any], n_a: int, b: Mapping[str, Any], n_b: int) -> dict[str, Any]:
    """Two batches' control conditions as one for their pooled samples (a's first): chunks joined, samples and
    parts joined, the newer batch's other fields. A batch without chunks leaves the pool unpaired."""
    ca, cb = chunks_of(a, n_a), chunks_of(b, n_b)
    out = {**b}
    out["samples"] = [*(a.get("samples") or []), *(b.get("samples") or [])]
    if out["samples"]:
        out["value"] = round(statistics.fmean(out["samples"]), 3)
    out["parts"] = [*(a.get("parts") or []), *(b.get("parts") or [])]
    out.pop(KEY, None)
    if ca is not None and cb is not None:
        out[KEY] = [c.as_data() for c in (*ca, *cb)]
    return out


@dataclass(frozen=True)
class Paired:
    """The control-relative comparison: the two sides, and the verdicts at the tolerance (to confirm) and at
    the gap the machine's change allows (to refute)."""

    old: Side
    new: Side
    confirm: Outcome
    refute: Outcome
    gap: float

    @property
    def verdict(self) -> str:
        from factreg.verdicts import Verdict

        if self.refute.verdict == Verdict.REFUTED:
            return Verdict.REFUTED
        return Verdict.CONFIRMED if self.confirm.verdict == Verdict.CONFIRMED else Verdict.INCONCLUSIVE

    @property
    def outcome(self) -> Outcome:
        from factreg.verdicts import Verdict

        return self.refute if self.verdict == Verdict.REFUTED else self.confirm

    def as_json(self) -> dict[str, Any]:
        out = self.outcome
        return {"verdict": str(self.verdict), "old": _side_json(self.old), "new": _side_json(self.new),
                "rel_diff": out.rel_diff, "p_value": out.p_value, "allowed": round(self.gap, 3),
                "message": out.message}  # fmt: skip


def _side_json(s: Side) -> dict[str, Any]:
    return {"value": round(s.mean, 6), "spread": round(s.sd, 6) if s.sd is not None else None, "n": s.n}


def compare(
    fact: Mapping[str, Any], samples: Sequence[float], then: Mapping[str, Any], now: Mapping[str, Any],
    tolerance: float, gap: float, alpha: float,
) -> Paired | None:
    """The fact's samples and the new ones, each relative to its own interleaved control (None when either side
    is unpaired)."""
    from factreg.measure import judge

    direction = fact.get("direction")
    noise = untracked((fact.get("samples") or [], then, direction), (samples, now, direction))
    old = side(fact.get("samples") or [], then, direction, noise)
    new = side(samples, now, direction, noise)
    if old is None or new is None:
        return None
    return Paired(old, new, judge.compare(old, new, tolerance, alpha, unit="× control"),
                  judge.compare(old, new, gap, alpha, unit="× control"), gap)  # fmt: skip
