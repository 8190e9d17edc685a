"""The tools an agent calls (`factreg mcp`), as plain functions over a registry: each returns JSON data with every
secret masked (`secrets.redact_data`), so what reaches an agent is what `factreg show --json` would print.

Read-only: `search_facts`, `get_fact`, `check_text`, `cite`, `status`, `llms_txt`. `record` writes a fact, with the
same validation as `factreg record` (`registry.facts.build_rows` before the database is touched); the server
offers it only with `--allow-write`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from factreg import secrets
from factreg.docs import check as chk
from factreg.docs import markers as mk
from factreg.docs import suggest as sg
from factreg.errors import NotFound, UsageError
from factreg.registry import display
from factreg.registry import facts as factmod
from factreg.registry.ids import check_id

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.store import Registry
    from factreg.registry.types import FactData

MAX_TEXT = 200_000  # characters of a snippet check_text reads
MAX_RESULTS = 200


class Tools:
    """The agent tools over one registry and its settings."""

    def __init__(self, registry: Registry, settings: Settings):
        self.registry = registry
        self.settings = settings

    def _index(self, ids: Iterable[str] | None = None) -> dict[str, FactData]:
        return chk.load_index(self.registry, self.settings.file_config, ids)

    def _advice(self, fact: FactData, index: Mapping[str, FactData], template: str | None = None,
                asof: bool = False) -> dict[str, Any]:
        """`_cite_advice`, and for a refuted fact not yet corrected the measurement that refuted it."""
        live = _live_or_none(fact, index)
        out = _cite_advice(fact, live, template, asof)
        target = live or fact
        if target.get("status") == "refuted":
            for version in reversed(factmod.history(self.registry, str(target["id"]))):
                found = [v for v in version.get("verifications") or [] if v.get("value") is not None]
                if found:
                    last = found[-1]
                    out["measured_now"] = {
                        "text": display.text({**last, "unit": target.get("unit")}),
                        "verified_at": last["verified_at"],
                        "verdict": last["verdict"],
                        "by": last.get("method_kind"),
                    }
                    break
        return out

    # ------------------------------------------------------------------ read

    def search_facts(
        self,
        query: str | None = None,
        metric: str | None = None,
        subject: str | None = None,
        status: str | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Current facts whose id, subject, metric, conditions or note hold every word of `query`."""
        found = factmod.list_facts(self.registry, self.settings.file_config, metric=metric or None,
                                   subject=subject or None)
        words = (query or "").lower().split()
        out = []
        for f in found:
            if status and f.get("status") != status:
                continue
            conds = f.get("conditions")
            parts = (conds.get("identity"), conds.get("info")) if conds else ()
            pairs = [f"{k}={v}" for part in parts for k, v in (part or {}).items()]
            hay = " ".join([str(f["id"]), str(f.get("subject") or ""), str(f.get("metric") or ""),
                            str(f.get("note") or ""), *pairs]).lower()
            if all(w in hay for w in words):
                out.append(_summary(f))
        limit = max(1, min(int(limit), MAX_RESULTS))
        return _redacted({"facts": out[:limit], "total": len(out)})

    def get_fact(self, fact_id: str) -> dict[str, Any]:
        """One fact: value, spread, n, interval, conditions, status with its reason, history, the marker to cite."""
        check_id(fact_id)
        index = self._index([fact_id])
        fact = index.get(fact_id)
        if fact is None:
            raise NotFound(f"no fact {fact_id!r} in the registry")
        history = factmod.history(self.registry, fact_id)
        out: dict[str, Any] = {
            **_summary(fact),
            "value": fact.get("value"),
            "spread": fact.get("spread"),
            "unit": fact.get("unit"),
            "n": fact.get("n"),
            "interval": (fact.get("stats") or {}).get("ci95"),
            "conditions": fact.get("conditions"),
            "method": (fact.get("method") or {}).get("kind"),
            "history": [
                {
                    "version": v["version"],
                    "text": display.text(v),
                    "measured_at": v["measured_at"],
                    "flags": v.get("flags"),
                    "verifications": [
                        {"verified_at": x["verified_at"], "verdict": x["verdict"],
                         "value": x.get("value"), "n": x.get("n")}
                        for x in v.get("verifications") or []
                    ],
                }
                for v in history
            ],
            "cite": self._advice(fact, index),
        }
        return _redacted(out)

    def check_text(self, text: str) -> dict[str, Any]:
        """A snippet about to be written: its unsourced claims with the facts that could back them, and its
        citations that no longer hold (stale, refuted, superseded, text differs) with the current value."""
        if len(text) > MAX_TEXT:
            raise UsageError(f"the text is over {MAX_TEXT} characters: check it in parts")
        index = self._index()
        suggestions = sg.suggest_text(text, index.values(), "<text>")
        unsourced = []
        for s in suggestions:
            item = s.as_json()
            for cand in item["candidates"]:
                fact = index.get(cand["fact_id"])
                if fact is not None and not cand["citable"]:
                    cand["current"] = self._advice(fact, index)
            unsourced.append(item)
        found, bad = mk.parse(text)
        problems = [chk.Problem("<text>", b.line, b.col, "bad_marker", b.message, b.fact_id) for b in bad]
        plan = chk.plan(chk.Scanned(Path("<text>"), text, found, problems), index)
        citations = []
        for p in plan.problems:
            item = p.as_json()
            fact = index.get(p.fact_id or "")
            if fact is not None:
                item["current"] = self._advice(fact, index)
            citations.append(item)
        return _redacted({
            "unsourced": unsourced,
            "citations": citations,
            "markers": len(found),
            "ok": not unsourced and not citations,
        })

    def cite(self, fact_id: str, format: str | None = None, asof: bool = False) -> dict[str, Any]:  # noqa: A002
        """The marker to paste for a fact (its successor's when it was superseded), and whether it may be cited."""
        check_id(fact_id)
        index = self._index([fact_id])
        fact = index.get(fact_id)
        if fact is None:
            raise NotFound(f"no fact {fact_id!r} in the registry")
        chk.live_fact(fact, index)  # a broken supersede chain is an error here
        return _redacted(self._advice(fact, index, format, asof))

    def status(self) -> dict[str, Any]:
        """How many facts are in each status, and those a document should not rely on, with the reason."""
        facts = factmod.list_facts(self.registry, self.settings.file_config)
        counts: dict[str, int] = {}
        for f in facts:
            counts[str(f["status"])] = counts.get(str(f["status"]), 0) + 1
        problems = [
            {"id": f["id"], "status": f["status"], "reason": f.get("status_reason"),
             "superseded_by": f.get("superseded_by")}
            for f in facts if f["status"] not in sg.CITABLE_STATUSES
        ]
        return _redacted({"total": len(facts), "counts": dict(sorted(counts.items())),
                                    "do_not_rely_on": problems})

    def llms_txt(self) -> str:
        """facts/llms.txt as `factreg report` renders it now."""
        from factreg.publish import report

        files = report.build(self.registry, self.settings)
        for path, text in files.items():
            if path.name == "llms.txt" and path.parent.name == report.FOLDER:
                return secrets.redact(text)
        raise NotFound("no llms.txt was rendered")

    # ------------------------------------------------------------------ write

    def record(self, new: Mapping[str, Any], min_uptime_s: float) -> dict[str, Any]:
        """Record a measurement, validated as `factreg record` validates it."""
        from factreg.registry import conditions

        fact_id = str(new.get("id") or "")
        metric = str(new.get("metric") or "")
        value, samples = new.get("value"), new.get("samples")
        if (value is None) == (samples is None):
            raise UsageError("give exactly one of value and samples")
        pairs = {kind: [f"{k}={v}" for k, v in dict(new.get(kind) or {}).items()] for kind in ("identity", "info")}
        made = factmod.NewFact(
            id=fact_id, metric=metric,
            value=factmod.parse_number(str(value), "value") if value is not None else None,
            samples=factmod.parse_samples(",".join(str(x) for x in samples)) if samples is not None else None,
            unit=new.get("unit"),
            spread=factmod.parse_number(str(new["spread"]), "spread") if new.get("spread") is not None else None,
            n=new.get("n"),
            identity=conditions.parse_pairs(pairs["identity"], "identity"),
            info=conditions.parse_pairs(pairs["info"], "info"),
            subject=new.get("subject"), measured_at=new.get("measured_at"), note=new.get("note"),
            direction=new.get("direction"),
        )
        factmod.build_rows(made)  # validate before touching the database
        data = factmod.record(self.registry, made, min_uptime_s)
        return _redacted(_summary(data) | {"version": data.get("version")})


def _summary(f: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": f["id"],
        "subject": f.get("subject"),
        "metric": f.get("metric"),
        "text": display.text(f),
        "status": f.get("status"),
        "status_reason": f.get("status_reason"),
        "flags": list(f.get("flags") or []),
        "measured_at": f.get("measured_at"),
        "superseded_by": f.get("superseded_by"),
    }


def _live_or_none(fact: FactData, index: Mapping[str, FactData]) -> FactData | None:
    try:
        return chk.live_fact(fact, index)
    except UsageError:
        return None


def _cite_advice(
    fact: Mapping[str, Any], live: Mapping[str, Any] | None, template: str | None = None, asof: bool = False
) -> dict[str, Any]:
    """Which fact to cite for `fact` now, its current text and marker, and why not when it should not be cited."""
    target = live or fact
    out: dict[str, Any] = {"fact_id": target["id"], "text": display.text(target), "status": target.get("status")}
    if target is not fact and target["id"] != fact["id"]:
        out["replaces"] = fact["id"]
    out["marker"] = sg.cite(target, template, asof)
    out["why_not"] = sg.why_not_citable(target)
    out["citable"] = out["why_not"] is None
    return out


def _redacted(data: dict[str, Any]) -> dict[str, Any]:
    """A tool's answer with every string redacted (`secrets.redact_data` keeps its shape)."""
    return cast("dict[str, Any]", secrets.redact_data(data))
