"""Decision files: `decisions/NNNN-<slug>.md`, MADR-compatible, rendered and written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.publish.decisions.data import DecisionData
from factreg.publish.decisions.review import load
from factreg.registry.store import Registry

if TYPE_CHECKING:

    pass


def render(decision: DecisionData, templates: Path | str | None = None, lang: str | None = None) -> str:
    """The MADR-compatible Markdown of one decision (in `lang`: English by default, or Korean)."""
    from factreg.publish import render as rendering

    return rendering.render("decision.md.j2", {"d": decision}, templates, lang)


def write_files(
    registry: Registry,
    config: Mapping[str, Any] | None,
    out: Path,
    templates: Path | str | None = None,
    numbers: Sequence[int] | None = None,
    decisions: Sequence[DecisionData] | None = None,
) -> tuple[dict[Path, str], list[Path]]:
    """Render decision files under `out/decisions/`; return (every file rendered with its text, the files that
    changed). Every path goes through `writer.write`, which refuses one outside `out`."""
    from factreg.publish import writer

    items = list(decisions) if decisions is not None else load(registry, config, numbers)
    if numbers is not None:
        items = [d for d in items if d["number"] in set(numbers)]
    lang = ((config or {}).get("report") or {}).get("lang")  # `[report] lang`, as `report` renders them
    texts = {Path(out) / d["path"]: render(d, templates, lang) for d in items}  # render all before writing any
    return texts, writer.write(texts, Path(out))
