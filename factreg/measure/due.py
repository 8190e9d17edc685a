"""`verify --due`: re-verify only the facts whose freshness asks for it, within a time budget — the command for cron.

Due: a current fact that is `stale` or `aging` by the freshness rules (its age against `warn_after`/`error_after`,
or a newer build or driver seen on its machine), not ended, and whose method factreg can re-run (llama-bench,
probe). Stale facts go first, then aging ones, the longest unconfirmed first. Facts that share a method are one run
(as `verify` groups them); a group is started only while the budget lasts and when the slowest group so far would
still fit, so a run ends within the budget plus at most one group's overrun. What was not reached is listed and
is due again next time.

The summary says what the run changed in the registry: every fact whose status moved (before → after, over all
facts: a verification that sees a new build makes other facts of that machine stale too) and every change point
that the new verifications revealed in a fact's history (`registry/series.py`). The registry keeps no log of
runs, so "since the last run" is what this run's verifications changed; anything recorded between runs shows in
`factreg status` and `factreg changes --since`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from factreg import clock
from factreg.measure import remeasure
from factreg.measure import verify as engine

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.measure.result import VerifyResult
    from factreg.registry.store import Registry
    from factreg.registry.types import FactData

DUE = ("stale", "aging")
DEFAULT_BUDGET = "10m"


@dataclass
class DueRun:
    """What one `verify --due` run did and changed."""

    budget_s: float
    elapsed_s: float = 0.0
    results: list[VerifyResult] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # due, not reached within the budget
    not_rerunnable: list[str] = field(default_factory=list)  # due, but their method cannot be re-run
    status_changes: list[dict[str, str]] = field(default_factory=list)
    new_changes: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"budget_s": self.budget_s, "elapsed_s": round(self.elapsed_s, 3), "results": self.results,
                "left": self.left, "not_rerunnable": self.not_rerunnable,
                "status_changes": self.status_changes, "new_changes": self.new_changes}


def _statuses(registry: Registry, settings: Settings) -> dict[str, tuple[str, str]]:
    from factreg.registry import status as st

    return {f["id"]: (f["status"], f["status_reason"]) for f in st.statuses(registry, settings.file_config)}


def due_facts(registry: Registry, settings: Settings,
              statuses: dict[str, tuple[str, str]] | None = None) -> tuple[list[FactData], list[FactData]]:
    """(the due facts factreg can re-run, in the order to verify them; the due facts it cannot re-run)."""
    from factreg.registry import facts
    from factreg.registry.freshness import NO_METHOD

    statuses = statuses if statuses is not None else _statuses(registry, settings)

    def due(status: str, why: str) -> bool:  # stale without a method is `unverifiable (no method)`: due, not runnable
        return status in DUE or why.startswith(NO_METHOD)

    wanted = [fid for fid, (status, why) in statuses.items() if due(status, why)]
    if not wanted:
        return [], []
    found = [f for f in facts.list_facts(registry, settings.file_config, ids=wanted)
             if due(f["status"], f["status_reason"]) and not f.get("ended_at")]
    found.sort(key=lambda f: (DUE.index(f["status"]) if f["status"] in DUE else 0, f["measured_at"], f["id"]))
    runnable = [f for f in found if remeasure.rerunnable(f)]
    ids = {f["id"] for f in runnable}
    return runnable, [f for f in found if f["id"] not in ids]


def _groups(chosen: Sequence[FactData]) -> list[list[FactData]]:
    """The facts in method groups, each group where its most urgent fact is."""
    groups: dict[str, list[FactData]] = {}
    for f in chosen:
        groups.setdefault(f"{f['method'].get('kind')}:{remeasure.method_key(f['method'])}", []).append(f)
    return list(groups.values())


def _change_keys(registry: Registry, ids: Sequence[str]) -> dict[str, set[str]]:
    from factreg.registry import series

    with registry.reader() as conn:
        found = series.load(conn, ids, samples=False)
    return {fid: {c.at_after for c in s.detect()} for fid, s in found.items()}


def run(registry: Registry, settings: Settings, budget_s: float,
        progress: Callable[[int, str], None] | None = None) -> DueRun:
    """Verify the due facts within `budget_s` seconds and say what changed (see the module docstring)."""
    from factreg.registry import series

    out = DueRun(budget_s=budget_s)
    start = clock.elapsed()
    before = _statuses(registry, settings)
    chosen, unrunnable = due_facts(registry, settings, before)
    out.not_rerunnable = [f["id"] for f in unrunnable]
    ids = [f["id"] for f in chosen]
    known = _change_keys(registry, ids)
    slowest = 0.0
    done = 0
    for group in _groups(chosen):
        used = clock.elapsed() - start
        if used >= budget_s or used + slowest > budget_s:
            out.left.extend(f["id"] for f in group)
            continue
        began = clock.elapsed()
        out.results.extend(engine.verify(registry, settings, group))
        slowest = max(slowest, clock.elapsed() - began)
        done += len(group)
        if progress:
            progress(done, group[-1]["id"])
    after = _statuses(registry, settings)
    for fid, (status, why) in sorted(after.items()):
        old = before.get(fid, ("new", ""))[0]
        if old != status:
            out.status_changes.append({"id": fid, "before": old, "after": status, "reason": why})
    verified = [r["id"] for r in out.results if r.get("recorded")]
    if verified:
        with registry.reader() as conn:
            found = series.load(conn, verified)
        for fid in sorted(found):
            s = found[fid]
            for c in s.detect():
                if c.at_after not in known.get(fid, set()):
                    out.new_changes.append(series.change_data(s, c))
    out.elapsed_s = clock.elapsed() - start
    return out


def summary_lines(r: DueRun) -> list[str]:
    """The run's summary for people: what was verified, what was left, what changed."""
    lines = [f"verify --due: {len(r.results)} fact(s) verified in {r.elapsed_s:.1f} s (budget {r.budget_s:g} s)"]
    if r.left:
        lines.append(f"  {len(r.left)} due fact(s) left for the next run (budget spent): {', '.join(r.left)}")
    if r.not_rerunnable:
        lines.append(f"  {len(r.not_rerunnable)} due fact(s) cannot be re-run (re-measure and record them): "
                     f"{', '.join(r.not_rerunnable)}")
    if r.status_changes:
        lines.append(f"  {len(r.status_changes)} status change(s):")
        lines += [f"    {c['id']}: {c['before']} → {c['after']} ({c['reason']})" for c in r.status_changes]
    else:
        lines.append("  no status changed")
    if r.new_changes:
        lines.append(f"  {len(r.new_changes)} new change point(s):")
        lines += [f"    {c['id']}: {c['summary']}" for c in r.new_changes]
    else:
        lines.append("  no new change point")
    return lines
