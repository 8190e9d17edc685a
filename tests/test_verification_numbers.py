"""Verifications have visible numbers: `verify`, `status` and `history` print `verification N`, `correct` takes
`--verification N|latest`, and `docs check`'s fix line is the exact command to run."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from factreg.registry.facts import VERIFICATION

SLOW = "0.43,0.45,0.44,0.46,0.42"  # the typed claim: 10× off
FAST = "4.3,4.5,4.4,4.6,4.2"


def _refuted(cli) -> int:  # type: ignore[no-untyped-def]
    """`a/e2e` typed by hand, then refuted by a newer measurement already in the registry; the verification's
    number as `verify --json` gives it."""
    for fid, samples in (("a/e2e", SLOW), ("b/e2e", FAST)):
        r = cli("record", fid, "--metric", "e2e", "--samples", samples, "--cond", "model=m", "--cond", "machine=h")
        assert r.exit_code == 0, r.stderr
    r = cli("verify", "a/e2e", "--against", "b/e2e", "--json")
    assert r.exit_code == 1, r.stderr
    [res] = r.json()
    assert res["verdict"] == "refuted"
    return int(res["verification"])


def test_verify_status_and_history_print_the_verification_number(cli, registry) -> None:
    number = _refuted(cli)
    with registry.read() as conn:
        stored = conn.execute(select(VERIFICATION.c.pk).where(VERIFICATION.c.fact_id == "a/e2e")).scalars().all()
    assert stored == [number]  # the number printed is the row's own
    text = cli("verify", "a/e2e", "--against", "b/e2e")
    assert f"verification {number + 1}" in text.stdout.splitlines()[0]
    assert f"to correct: factreg correct a/e2e --verification {number + 1}" in text.stdout
    status = cli("status")
    assert f"refuted by verification {number + 1} on" in status.stdout
    assert cli("status", "--json").json()["facts"][0]["verification"] == number + 1
    history = cli("history", "a/e2e")
    assert f"verification {number}:" in history.stdout and f"verification {number + 1}:" in history.stdout


def test_correct_takes_latest_and_says_which_verification_it_picked(cli, registry) -> None:
    first = _refuted(cli)
    second = int(cli("verify", "a/e2e", "--against", "b/e2e", "--json").json()[0]["verification"])
    assert second > first
    r = cli("correct", "a/e2e", "--verification", "latest", "--json")
    assert r.exit_code == 0, r.stderr
    assert f"--verification latest: verification {second}" in r.stderr
    assert r.json()["correction"] >= 1
    bad = cli("correct", "b/e2e", "--verification", "newest")
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: --verification takes a verification number")
    none = cli("correct", "b/e2e", "--verification", "latest")
    assert none.exit_code == 2 and "no verification of b/e2e has measured a value" in none.stderr


def test_docs_check_fix_line_is_the_exact_command(cli, tmp_path: Path) -> None:
    number = _refuted(cli)
    doc = tmp_path / "docs" / "speed.md"
    doc.parent.mkdir()
    doc.write_text("Replies in <!-- fact: a/e2e -->?<!-- /fact -->.\n", encoding="utf-8")
    assert cli("docs", "sync", str(doc.parent)).exit_code in (0, 1)
    r = cli("docs", "check", str(doc.parent))
    assert r.exit_code == 1
    fixes = [line.strip() for line in r.stdout.splitlines() if line.strip().startswith("fix:")]
    assert f"fix: `factreg correct a/e2e --verification {number}`" in fixes[0]
    assert "…" not in r.stdout and "docs sync" not in fixes[0]
    problem = json.loads(cli("docs", "check", str(doc.parent), "--json").stdout)
    found = problem["problems"] if isinstance(problem, dict) else problem
    refuted = [p for p in found if p["kind"] == "refuted"]
    assert refuted[0]["verification"] == number
    assert refuted[0]["fix"].startswith(f"`factreg correct a/e2e --verification {number}`")
