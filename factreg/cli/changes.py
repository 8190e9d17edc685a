"""Commands: changes — where a fact's measured level shifted in its history, by how much, and what changed there."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from factreg.cli.common import (
    DbOption,
    JsonFlag,
    emit,
    emit_json,
    handles_errors,
    info,
    number,
    open_registry,
    whole_number,
)


def register(app: typer.Typer) -> None:
    app.command("changes")(changes)


@handles_errors
def changes(
    ids: Annotated[list[str] | None, typer.Argument(metavar="[ID]...", help="Facts to look at (default: every "
                                                    "fact with enough points).")] = None,
    since: Annotated[str | None, typer.Option(
        "--since", metavar="DATE", help="Only changes whose new level began at or after this date (ISO-8601) or this long "
        "ago (7d, 2w, yesterday); "
        "detection still reads the whole history.", show_default=False)] = None,
    min_segment: Annotated[int, typer.Option(
        "--min-segment", help="Fewest points a level may have: a shift is reported once this many points were "
        "measured after it.", parser=whole_number("--min-segment"))] = 4,
    alpha: Annotated[float, typer.Option(
        "--alpha", help="Family-wise significance: a history without a shift reports one with at most this "
        "probability.", parser=number("--alpha"))] = 0.01,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Find the shifts in each fact's history (its versions and verifications, in time order): when, the medians
    before and after with their intervals, the relative change, its p-value, and the conditions that changed there.

    Exit 0 whether or not something changed; 2 on a usage error or a fact not in the registry.
    See docs/history.md.
    """
    from factreg.registry import series

    _s, reg = open_registry(db, create=False)
    found = series.find_changes(reg, ids or [], since=since, min_segment=min_segment, alpha=alpha)
    if json_out:
        emit_json(found)
    else:
        emit("".join(_text(c) for c in found))
    info(f"{len(found)} change(s) in {len({c['id'] for c in found})} fact(s)" if found else "No changes found.")


def _level(side: dict[str, Any], unit: str) -> str:
    from factreg.fmt import num

    return (f"{num(side['median'])} {unit} [{num(side['ci_low'])}, {num(side['ci_high'])}] "
            f"({side['ci_level'] * 100:.4g}% interval, {side['n']} points)")


def _text(c: dict[str, Any]) -> str:
    rel = c["change"]
    what = "changed" if rel is None else f"{'dropped' if rel < 0 else 'rose'} {abs(rel) * 100:.1f}%"
    (a, b), (pa, pb) = c["between"], c["points"]
    causes = ", ".join(f"{k} {old if old is not None else '(unset)'} → {new if new is not None else '(unset)'}"
                       for k, (old, new) in c["conditions_changed"].items()) or "no recorded condition changed"
    return (f"{c['id']}  {what} between {a} ({pa}) and {b} ({pb})\n"
            f"    before  {_level(c['before'], c['unit'])}\n"
            f"    after   {_level(c['after'], c['unit'])}\n"
            f"    p-value {c['p_value']:.2g}\n"
            f"    cause candidates: {causes}\n")
