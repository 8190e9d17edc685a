"""A doc citing a fact whose endpoint now answers 401 is flagged by `docs check`."""

import json
from pathlib import Path

from sqlalchemy import insert

from factreg.registry.facts import VERIFICATION


def test_citation_of_an_unmeasurable_fact_is_flagged(cli, registry):
    cli("record", "gw/27b/e2e", "-m", "e2e", "--samples", "4.29", "-c", "model=27B",
        "-c", "endpoint=https://gateway.example/v1")
    doc = Path("runbook.md")
    doc.write_text("Reply through the gateway: <!-- fact: gw/27b/e2e -->4.29 s<!-- /fact -->.\n", encoding="utf-8")
    assert cli("docs", "check", str(doc)).exit_code == 0
    with registry.write() as conn:
        conn.execute(insert(VERIFICATION), [{
            "fact_id": "gw/27b/e2e", "fact_version": 1, "verified_at": "2026-11-29T00:00:00Z",
            "verdict": "auth_failed", "method_kind": "probe", "samples": "[]", "observed": "{}", "diff": "{}",
            "message": "HTTP 401 from gateway.example/v1/models"}])
    r = cli("docs", "check", str(doc), "--json")
    assert r.exit_code == 1
    problems = json.dumps(r.json())
    assert "unverifiable" in problems and "gw/27b/e2e" in problems
    assert doc.read_text(encoding="utf-8").count("4.29 s") == 1  # check writes nothing
