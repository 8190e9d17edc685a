"""How much of the documents' performance claims are sourced (`factreg docs coverage`, the report's section).

Per file and in total: the claims found (the unsourced claims `docs lint` finds, plus every citation marker: a
cited number is a claim with a source), how many are cited, how many are cited and current (the cited fact's
status is fresh or aging: not stale, refuted, retracted, shifted, unverifiable, superseded, conditions_changed,
nor unknown), how many are unsourced, and the share cited and current. A file without claims has no share; the
total's share is 100% when there are no claims at all (nothing is unsourced).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factreg.docs.scan import Scan
    from factreg.registry.types import FactData

CURRENT = ("fresh", "aging")


@dataclass
class FileCoverage:
    path: str
    claims: int = 0
    cited: int = 0
    current: int = 0
    unsourced: int = 0

    @property
    def share(self) -> float | None:
        """Cited-and-current claims over all claims, in percent (None without claims)."""
        return 100.0 * self.current / self.claims if self.claims else None

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "claims": self.claims, "cited": self.cited, "cited_current": self.current,
                "unsourced": self.unsourced, "share_cited_current": self.share}


@dataclass
class Coverage:
    files: list[FileCoverage] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    @property
    def total(self) -> FileCoverage:
        t = FileCoverage("total")
        for f in self.files:
            t.claims += f.claims
            t.cited += f.cited
            t.current += f.current
            t.unsourced += f.unsourced
        return t

    @property
    def share(self) -> float:
        share = self.total.share
        return 100.0 if share is None else share

    def as_json(self) -> dict[str, Any]:
        return {"files": [f.as_json() for f in self.files], "total": {**self.total.as_json(), "share_cited_current":
                self.share}, "unreadable": self.unreadable}


HEAD_CHARS = 1024  # what `skip` sees of a document: its beginning, where a generated file says so


def measure(
    paths: Iterable[Path | str],
    index_of: Any,
    config: Mapping[str, Any] | None = None,
    skip: Callable[[Path, str], bool] | None = None,
    *,
    jobs: int | None = None,
) -> Coverage:
    """The coverage of the documents under `paths`; `index_of()` loads the facts by id (called only when some
    document cites one); `skip(path, head)` leaves a document out (the report's own generated pages), given the
    first HEAD_CHARS characters of a document that holds claims or citations. One pass of factreg.docs.scan
    (`jobs`: its processes)."""
    from factreg.docs.scan import scan

    return tally(scan(paths, config, check=True, lint=True, jobs=jobs), index_of, skip)


def tally(scanned: Scan, index_of: Any, skip: Callable[[Path, str], bool] | None = None) -> Coverage:
    """The coverage of what one pass found (`scan(..., check=True, lint=True)`, with or without the document
    cache); `index_of` and `skip` as for `measure`."""
    out = Coverage(unreadable=[str(p.path) for p in scanned.unreadable])
    cited = {str(d.path): d.markers for d in scanned.docs if d.markers}
    claims: dict[str, int] = {}
    for f in scanned.findings:
        if f.kind == "claim":
            claims[f.path] = claims.get(f.path, 0) + 1
    index: Mapping[str, FactData] | None = None
    for path in scanned.paths:
        name = str(path)
        found, unsourced = cited.get(name, []), claims.get(name, 0)
        if not found and not unsourced:
            continue
        if skip is not None and skip(path, _head(path)):
            continue
        row = FileCoverage(name, unsourced=unsourced, cited=len(found))
        if found:
            if index is None:
                index = index_of()
            row.current = sum(1 for m in found if (index.get(m.fact_id) or {}).get("status") in CURRENT)
        row.claims = row.cited + row.unsourced
        out.files.append(row)
    return out


def _head(path: Path) -> str:
    """The first HEAD_CHARS characters of a document ("" when it can no longer be read)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(HEAD_CHARS * 4)
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")[:HEAD_CHARS]


def pct(share: float | None) -> str:
    return "—" if share is None else f"{share:.0f}%"
