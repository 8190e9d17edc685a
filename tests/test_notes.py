"""What a reader sees first: the demo's correction notes, its llms.txt and index, and its charts."""

from __future__ import annotations

import math
import os
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests import test_site_browser as browsing

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
    assert "Decided by: verification 1 (refuted, p = 0.0075, n=5, 2026-10-26)" in text  # the refuting one, quoted
    # corrected by a new version of the same id: the two sides are its versions
    assert "`skill/gamebox/a3b-decode@v2` 11.9 ± 7.2 tok/s, 95% interval 2.96–20.8 tok/s, n=5" in text


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


CHARTS = ("daytime/35b-a3b/e2e", "skill/gamebox/a3b-decode", "night/a3b-nothink/ttft")
SVG = "{http://www.w3.org/2000/svg}"


def history(demo: Path, fid: str) -> list[dict]:
    import json

    env = {**os.environ, "PYTHONPATH": str(ROOT), "FACTREG_USER_DIR": str(demo.parent / "user")}
    env.pop("FACTREG_DB", None)
    r = subprocess.run([sys.executable, "-m", "factreg", "history", fid, "--json"], cwd=demo, capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def is_round_step(step: float) -> bool:
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-9)
    return any(abs(mantissa - m) < 1e-6 for m in (1, 2, 5))


@pytest.mark.parametrize("fid", CHARTS)
def test_demo_charts_draw_every_sample_round_ticks_and_a_title(demo, fid):
    root = ET.parse(demo / "facts" / f"{fid}.svg").getroot()
    versions = history(demo, fid)
    expected = sum(len(v["samples"]) + sum(len(r.get("samples") or []) for r in v["verifications"] if r["value"])
                   for v in versions)
    drawn = root.findall(f".//{SVG}circle[@class='sample']")
    assert len(drawn) == expected
    ticks = [float(e.text) for e in root.iter(f"{SVG}text") if "tick" in (e.get("class") or "")]
    assert len(ticks) >= 3
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(steps) == 1 and is_round_step(steps.pop())
    heading = next(e for e in root.iter(f"{SVG}text") if e.get("class") == "heading")
    assert heading.text == f"{fid} — {versions[-1]['metric']} ({versions[-1]['unit']})"
    legend = root.find(f".//{SVG}g[@class='legend']")
    assert legend is not None and "median, 95% interval" in "".join(legend.itertext())
    dated = [e.text for e in root.iter(f"{SVG}text") if (e.text or "")[:4].isdigit() and "-" in (e.text or "")]
    assert len(dated) == len(set(dated))  # never the same date at both ends


def test_a_one_measurement_chart_shows_its_spread(demo):
    root = ET.parse(demo / "facts/daytime/35b-a3b/e2e.svg").getroot()
    dots = root.findall(f".//{SVG}circle[@class='sample']")
    xs = sorted(float(d.get("cx")) for d in dots)
    assert len(xs) == 3 and xs[-1] - xs[0] >= 60  # side by side, not one stack
    note = next(e for e in root.iter(f"{SVG}text") if e.get("class") == "note")
    assert note.text.startswith("one measurement, ") and "3 samples" in note.text
    refuted = ET.parse(demo / "facts/skill/gamebox/a3b-decode.svg").getroot()
    marks = [e for e in refuted.iter() if (e.get("class") or "").startswith("point verification")]
    assert [e.get("class") for e in marks] == ["point verification refuted"]


@pytest.fixture(scope="module")
def chrome() -> str:
    """The headless browser test_site_browser.py uses (a skip, or in CI a failure, without one)."""
    import shutil

    found = next((path for path in map(shutil.which, browsing.BROWSERS) if path), None)
    if found is None:
        pytest.skip("no headless browser: install Debian's chromium (`apt-get install -y chromium`)")
    return found


def test_demo_charts_render_in_a_real_browser(demo, chrome, tmp_path):
    for fid in CHARTS:
        shot = tmp_path / (fid.replace("/", "-") + ".png")
        browsing.load(chrome, (demo / "facts" / f"{fid}.svg").as_uri(), tmp_path, f"--screenshot={shot}",
             "--window-size=660,320")
        head = shot.read_bytes()
        assert head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) > 5000, fid
        width, height = struct.unpack(">II", head[16:24])
        assert (width, height) == (660, 320)
        print(shot)


def test_a_marker_may_show_the_flags_next_to_the_value(registry, cli, tmp_path):
    from factreg.docs import markers
    from tests.docs_support import record

    cold = record(registry, "night/a3b/ttft", 0.13, metric="ttft", n=1, machine="gamebox", warm="false")
    assert {"cold", "few_samples"} <= set(cold["flags"])
    record(registry, "gamebox/a3b/tg32", 11.9, 0.4, n=30, machine="gamebox")
    doc = tmp_path / "docs" / "voice.md"
    doc.parent.mkdir()
    doc.write_text("First token <!-- fact: night/a3b/ttft flags -->0.5 s<!-- /fact -->, plain "
                   "<!-- fact: night/a3b/ttft -->0.5 s<!-- /fact -->, decode "
                   "<!-- fact: gamebox/a3b/tg32 flags asof -->x<!-- /fact -->.\n", encoding="utf-8")
    found, problems = markers.parse(doc.read_text(encoding="utf-8"))
    assert problems == [] and [m.flags for m in found] == [True, False, True]
    assert cli("docs", "sync", str(doc.parent)).exit_code == 0
    text = doc.read_text(encoding="utf-8")
    assert "<!-- fact: night/a3b/ttft flags -->0.130 s (use with care: cold, few_samples)<!-- /fact -->" in text
    assert "<!-- fact: night/a3b/ttft -->0.130 s<!-- /fact -->" in text
    assert "-->11.9 ± 0.4 tok/s (as of " in text and "use with care" not in text.split("decode", 1)[1]
    assert cli("docs", "check", str(doc.parent)).exit_code == 0
    bad, problems = markers.parse("<!-- fact: a/b flag -->x<!-- /fact -->")
    assert bad == [] and "known: format, asof, flags" in problems[0].message


def test_the_html_fact_page_says_use_with_care(demo, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FACTREG_USER_DIR": str(demo.parent / "user")}
    env.pop("FACTREG_DB", None)
    out = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "factreg", "report", "--html", "--out", str(out)], cwd=demo,
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    page = (out / "night/a3b-nothink/ttft.html").read_text(encoding="utf-8")
    assert '<p class="care"><strong>Use with care:</strong> cold: measured right after a server restart' in page
    plain = (out / "night/27b-gateway/ttft.html").read_text(encoding="utf-8")
    assert "cold:" not in plain


@pytest.fixture
def project_in(tmp_path: Path, registry, monkeypatch):  # type: ignore[no-untyped-def]
    """A docs repository with a .factreg project (its config given by the test), the case study's facts and a
    decision relying on the 02:30 e2e."""
    from tests.decisions_support import git, init_repo, seed

    def make(config: str) -> Path:
        repo = init_repo(tmp_path / "proj")
        (repo / ".factreg").mkdir()
        (repo / ".factreg/config.toml").write_text(config, encoding="utf-8")
        (repo / "docs").mkdir()
        (repo / "docs/voice.md").write_text("e2e <!-- fact: night/35b-a3b/e2e -->1.07 s<!-- /fact -->\n")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "docs")
        monkeypatch.chdir(repo)
        seed(registry)
        return repo

    return make


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_notes_reports_and_decisions_in_english_and_korean(cli, project_in, lang):
    repo = project_in('[docs]\nroots = ["docs"]\n' + ('[report]\nlang = "ko"\n' if lang == "ko" else ""))
    assert cli("decision", "add", "Voice front end → 35B-A3B", "--cites", "night/35b-a3b/e2e").exit_code == 0
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--cause", "cold, toy body", "--json")
    assert r.exit_code == 0, r.stderr
    text = Path(r.json()["note"]).read_text(encoding="utf-8")
    assert cli("report").exit_code == 0
    stale = (repo / "facts/STALE.md").read_text(encoding="utf-8")
    decision = next((repo / "decisions").glob("0001-*.md")).read_text(encoding="utf-8")
    if lang == "ko":
        assert "# 정정: `night/35b-a3b/e2e`" in text and "## 가능한 원인" in text and "판단 근거:" in text
        first = opening(text)
        assert "`night/35b-a3b/e2e@v1`는 e2e = 1.07 s라고 했지만" in first and "112% 높음 (2.1배 느림)" in first
        assert "가장 근거가 있는 원인: 콜드 서버" in first
        assert "- 콜드 서버 — 이전 값 측정: 40 s, 서버 재시작 직후 (플래그 cold)" in text
        assert "판단 근거: `night/35b-a3b/e2e@v2` 2.27 ± 1.14 s, 95% 구간 " in text
        assert "# 오래된 사실" in stale
        assert "## 근거로 삼은 사실" in decision and "> **검토 필요**:" in decision
        assert "Probable causes" not in text and "Facts relied on" not in decision
    else:
        assert "# Correction: `night/35b-a3b/e2e`" in text and "## Probable causes" in text
        assert "112% higher (2.1× slower)" in opening(text) and "Best supported causes: cold server; another request body" in opening(text)
        assert "# Stale facts" in stale and "## Facts relied on" in decision
        assert "정정" not in text and "근거" not in decision
    front = decision.split("---\n\n#", 1)[0]  # the front matter is the same in both languages
    assert "factreg-number: 1" in front and "factreg-needs-review:" in front


def test_an_unknown_language_is_one_error_line(cli, project_in):
    project_in('[report]\nlang = "xx"\n')
    r = cli("report")
    assert r.exit_code != 0 and "language 'xx' is not one of: en, ko" in r.stderr
    assert "Traceback" not in r.stderr


def test_lang_option_overrides_the_config(cli, project_in):
    repo = project_in('[docs]\nroots = ["docs"]\n[report]\nlang = "ko"\n')
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--lang", "en", "--json")
    assert r.exit_code == 0, r.stderr
    assert Path(r.json()["note"]).read_text(encoding="utf-8").split("\n")[1] == "# Correction: `night/35b-a3b/e2e`"
    assert cli("report", "--lang", "en").exit_code == 0
    assert "# Stale facts" in (repo / "facts/STALE.md").read_text(encoding="utf-8")
    assert cli("report").exit_code == 0
    assert "# 오래된 사실" in (repo / "facts/STALE.md").read_text(encoding="utf-8")
    bad = cli("report", "--lang", "fr")
    assert bad.exit_code != 0 and bad.stderr.strip().splitlines() == ["Error: language 'fr' is not one of: en, ko"]


def test_a_retraction_note_in_korean(cli, project_in):
    project_in('[docs]\nroots = ["docs"]\n[report]\nlang = "ko"\n')
    r = cli("retract", "night/35b-a3b/e2e", "--because", "toy body", "--json")
    assert r.exit_code == 0, r.stderr
    text = Path(r.json()["note"]).read_text(encoding="utf-8")
    assert text.split("\n")[1] == "# 철회: `night/35b-a3b/e2e`" and "## 이유\n\ntoy body" in text
    assert "- [docs/voice.md](../../docs/voice.md) 1행: 1.07 s 인용" in text
