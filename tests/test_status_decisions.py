"""`factreg status` shows the decisions that need review, as the reports do."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("story_clock")  # the case study, told at its own time


def test_status_lists_decisions_needing_review(cli, tmp_path):
    cli("record", "night/a3b/e2e", "-m", "e2e", "--samples", "1.07", "-c", "model=35B-A3B",
        "-c", "endpoint=http://gb/v1", "-c", "warm=false")
    cli("record", "day/a3b/e2e", "-m", "e2e", "--samples", "2.0,2.27,4.1", "-c", "model=35B-A3B",
        "-c", "endpoint=http://gb/v1", "-c", "warm=true")
    out = str(tmp_path / "site")
    Path(out).mkdir()
    assert cli("decision", "add", "Voice front end → 35B-A3B", "--cites", "night/a3b/e2e", "--status", "accepted",
               "--out", out).exit_code == 0
    before = cli("status", "--json").json()
    assert before["decisions_needing_review"] == []
    assert cli("correct", "night/a3b/e2e", "--by", "day/a3b/e2e", "--as", "day/a3b/e2e", "--out", out).exit_code == 0
    after = cli("status", "--json").json()
    (review,) = after["decisions_needing_review"]
    assert review["number"] == 1 and "night/a3b/e2e was superseded by day/a3b/e2e" in review["review_reason"]
    human = cli("status")
    assert "needs review       decision 1: Voice front end → 35B-A3B" in human.stdout
    assert human.stderr.strip().endswith("1 decision(s) need review")
