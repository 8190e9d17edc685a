"""What a reader sees first: the demo's correction notes, its llms.txt and index, and its charts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PERCENT_CHANGE = re.compile(r"[+\-−]\s?\d+(\.\d+)?\s?%")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """The demo replayed once (without the live part) in a fresh folder."""
    work = tmp_path_factory.mktemp("notes") / "demo"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FACTREG_USER_DIR": str(work.parent / "user")}
    env.pop("FACTREG_DB", None)
    r = subprocess.run([sys.executable, "-m", "factreg", "demo", "--dir", str(work), "--no-live"], cwd=work.parent,
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return work


def note(demo: Path, name: str) -> str:
    return (demo / "facts/corrections" / f"2026-10-26-{name}.md").read_text(encoding="utf-8")


def opening(text: str) -> str:
    """The first paragraph after the title."""
    return text.split("\n# ", 1)[1].split("\n\n")[1]


def test_the_28x_note_names_both_comparisons_and_the_reversal(demo):
    text = note(demo, "claim-voice-28x-faster")
    first = opening(text)
    assert "35B-A3B is 28.8× faster than flash-next" in first
    assert "35B-A3B is 3.1× slower than 27B" in first and "direction is reversed" in first
    assert "ttft of 35B-A3B (thinking off, cold, n=1: 0.130 s) against flash-next (thinking on" in first
    assert "e2e of 35B-A3B (thinking off, warm, n=3" in first and "against 27B (thinking off, warm" in first
    assert "2.35–9.53" in first
    assert "no percent change" in first and PERCENT_CHANGE.search(text) is None
    for side in ("night/a3b-nothink/ttft", "night/flash-think/ttft", "daytime/35b-a3b/e2e", "daytime/27b/e2e"):
        assert f"`{side}`" in text
    assert "| 95% interval | — | [2.35, 9.53]× |" in text
    causes = text.split("## Probable causes", 1)[1].split("##", 1)[0]
    lines = [x for x in causes.splitlines() if x.startswith("- ")]
    # the user's stated cause, then the evidence: the metric, thinking on vs off, cold vs warm
    assert lines[1].startswith("- another metric: the old comparison used ttft, the new one e2e")
    assert lines[2].startswith("- the old comparison mixed thinking on and off — flash-next thinking on")
    assert lines[3].startswith("- the old comparison set a cold server against a warm one") and "40 s" in lines[3]


def test_every_demo_note_says_what_changed_and_why_first(demo):
    for name in ("claim-voice-28x-faster", "night-a3b-nothink-e2e", "skill-gamebox-a3b-decode"):
        first = opening(note(demo, name))
        assert "Best supported cause" in first, name
        assert 1 < first.count(". ") + 1 <= 6, first
    e2e = opening(note(demo, "night-a3b-nothink-e2e"))
    assert "it is 2.27 ± 1.14 s" in e2e and "112% higher (2.1× slower)" in e2e and "cold vs warm server" in e2e
    tg = opening(note(demo, "skill-gamebox-a3b-decode"))
    assert "58% lower (2.4× slower)" in tg and "outside the new interval" in tg


def test_the_skill_note_collapses_unrecorded_conditions_into_one_line(demo):
    text = note(demo, "skill-gamebox-a3b-decode")
    assert "(not recorded)" not in text.split("## Probable causes", 1)[1]
    unrecorded = [x for x in text.splitlines() if x.startswith("- ") and "recorded no conditions" in x]
    assert len(unrecorded) == 1
    for name in ("build", "GPU", "model type", "offload"):
        assert name in unrecorded[0]
    assert "Decided by: `gamebox/35b-a3b/tg32` 11.9 ± 7.2 tok/s, 95% interval 2.96–20.8 tok/s, n=5" in text


def test_llms_txt_lists_the_cold_fact_under_use_with_care(demo):
    text = (demo / "facts/llms.txt").read_text(encoding="utf-8")
    current = text.split("## Current facts", 1)[1].split("## ", 1)[0]
    care = text.split("## Use with care", 1)[1].split("## ", 1)[0]
    assert "night/a3b-nothink/ttft" not in current
    line = next(x for x in care.splitlines() if "[night/a3b-nothink/ttft]" in x)
    assert "0.130 s" in line and "cold: measured right after a server restart" in line and "n=1 sample" in line
    flagged = {"cold", "few_samples", "thinking_on", "cache_hit", "high_variance"}
    for x in current.splitlines():  # a current fact carries none of the integrity flags
        assert not any(f in x for f in flagged), x
    readme = (demo / "facts/README.md").read_text(encoding="utf-8")
    row = next(x for x in readme.splitlines() if x.startswith("| [`night/a3b-nothink/ttft`]"))
    assert "⚠ few_samples, cold" in row and "use with care" in row
    page = (demo / "facts/night/a3b-nothink/ttft.md").read_text(encoding="utf-8")
    assert "**Use with care:** cold: measured right after a server restart" in page
