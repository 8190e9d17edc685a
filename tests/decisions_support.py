"""The case study as registry data, shared by the compare, decisions, corrections and report tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

from factreg.registry import facts
from factreg.registry.conditions import body_sha256
from factreg.registry.facts import NewFact

SHORT_BODY = body_sha256({"messages": [{"role": "user", "content": "hi"}], "stream": True})
REAL_BODY = body_sha256(
    {
        "messages": [{"role": "system", "content": "voice terminal…"}, {"role": "user", "content": "고마워"}],
        "tools": ["t"],
        "stream": True,
    }
)
NIGHT = "2026-10-26T02:30:00Z"
DAY = "2026-10-26T14:05:00Z"

GAMEBOX = {"machine": "gamebox", "model": "35b-a3b", "endpoint": "http://gamebox:8080/v1"}
FLASH = {"machine": "gamebox", "model": "flash-next", "endpoint": "http://gamebox:8081/v1"}
REMOTE = {"machine": "remote", "model": "27b", "endpoint": "http://remote:8080/v1"}
GATEWAY = {"machine": "remote", "model": "27b", "endpoint": "http://gateway:9000/v1"}


def night_facts() -> list[NewFact]:
    """The 02:30 table: single streamed requests with a short body; 35B-A3B right after a restart."""
    rows = [
        ("night/35b-a3b", GAMEBOX, "off", 0.13, 1.07, {"uptime_s": "40"}),
        ("night/flash-next", FLASH, "off", 0.21, 1.49, {"uptime_s": "86400"}),
        ("night/27b-gateway", GATEWAY, "off", 0.45, 4.29, {"uptime_s": "86400"}),
        ("night/flash-next-thinking", FLASH, "on", 3.75, 4.73, {"uptime_s": "86400"}),
    ]
    out = []
    for prefix, ident, thinking, ttft, e2e, info in rows:
        for metric, value in (("ttft", ttft), ("e2e", e2e)):
            out.append(
                NewFact(
                    id=f"{prefix}/{metric}",
                    metric=metric,
                    value=value,
                    n=1,
                    identity={**ident, "thinking": thinking, "body_sha256": SHORT_BODY},
                    info=info,
                    measured_at=NIGHT,
                    error_after="3650d",
                    warn_after="3600d",
                )
            )
    return out


def day_facts() -> list[NewFact]:
    """The daytime re-measurement: the real body, 3 runs per model, long after the servers settled."""
    return [
        NewFact(
            id="day/27b/e2e",
            metric="e2e",
            samples=[0.43, 0.73, 0.85],
            identity={**REMOTE, "thinking": "off", "body_sha256": REAL_BODY},
            info={"uptime_s": "36000"},
            measured_at=DAY,
            error_after="3650d",
            warn_after="3600d",
        ),
        NewFact(
            id="day/35b-a3b/e2e",
            metric="e2e",
            samples=[2.0, 2.27, 4.1],
            identity={**GAMEBOX, "thinking": "off", "body_sha256": REAL_BODY},
            info={"uptime_s": "36000"},
            measured_at=DAY,
            error_after="3650d",
            warn_after="3600d",
        ),
    ]


def seed(registry, day: bool = True) -> None:  # type: ignore[no-untyped-def]
    """Record the case study's facts (the night table, and the daytime facts unless `day` is False)."""
    facts.record_many(registry, night_facts() + (day_facts() if day else []))


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` and return its stdout (the tests' view of the repository, independent of GitPython)."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def init_repo(path: Path) -> Path:
    """A fresh git repository with one commit (a README), on branch main."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# project\n", encoding="utf-8")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "start")
    return path


def add_verification(
    registry,
    fact_id: str,
    verdict: str,
    *,
    value: float | None = None,  # type: ignore[no-untyped-def]
    samples: list[float] | None = None,
    observed: dict | None = None,
    verified_at: str = "2026-10-27T10:00:00Z",
    message: str | None = None,
) -> int:
    """Insert a verification of the fact's current version, as the verify engine would; return its number."""
    import json

    from sqlalchemy import insert

    from factreg import stats

    current = facts.get(registry, fact_id)
    spread = n = None
    if samples:
        s = stats.summarize(samples)
        value, spread, n = s.median, s.stdev, s.n
    row = {
        "fact_id": fact_id,
        "fact_version": current["version"],
        "verified_at": verified_at,
        "verdict": verdict,
        "method_kind": "manual",
        "hostname": "testhost",
        "value": value,
        "spread": spread,
        "n": n,
        "samples": json.dumps(samples or []),
        "observed": json.dumps(observed or {}),
        "diff": json.dumps({}),
        "message": message,
    }
    with registry.write() as conn:
        result = conn.execute(insert(facts.VERIFICATION).values(**row))
        return int(result.inserted_primary_key[0])


def docs_project(root: Path) -> Path:
    """A project folder (no git) whose `[docs] roots` is `docs/`, with an empty `docs/`."""
    (root / ".factreg").mkdir(parents=True)
    (root / ".factreg" / "config.toml").write_text('[docs]\nroots = ["docs"]\n', encoding="utf-8")
    (root / "docs").mkdir()
    return root
