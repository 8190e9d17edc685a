"""History that notices: a fact's series, `factreg changes`, the `shifted` status, `docs check` on it, and
`verify --due` with its budget and summary. Every value is recorded or imported (no live measurement), and every
date is relative to the tests' clock (`ago`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factreg.errors import UsageError
from factreg.registry import facts, series
from factreg.registry.facts import NewFact
from tests.conftest import ago

FACT = "gamebox/a3b/tg32"
OLD, NEW = "8cf427ff", "1a2b3c4"
# Recorded values: a level near 28 tok/s, then one near 12 (fixed numbers, so no verdict depends on noise).
HIGH = [28.1, 27.6, 28.4, 27.9, 28.3, 27.8, 28.0, 28.2]
LOW = [12.1, 11.7, 12.4, 11.8, 12.0]


def record_at(cli, days: float, value: float, *, fid: str = FACT, build: str = OLD, extra: tuple[str, ...] = ()):
    samples = ",".join(str(round(value + d, 2)) for d in (-0.2, 0.0, 0.2))
    r = cli("record", fid, "-m", "tg_rate", "--samples", samples, "-c", "machine=gamebox", "-c", f"build_commit={build}",
            "-c", "model=35b-a3b", "--measured-at", ago(days), *extra)
    assert r.exit_code == 0, r.stderr
    return r


def import_verifications(cli, tmp_path: Path, fid: str, version: int, points: list[tuple[float, float, dict]],
                         verdict: str = "confirmed") -> None:
    """Verifications of `fid`@`version` as a registry exports them (days ago, value, observed), through `import`."""
    rows = [{"fact_version": version, "verified_at": ago(days), "verdict": verdict, "method_kind": "llama-bench",
             "hostname": "gamebox", "value": value, "spread": 0.2, "n": 3,
             "samples": json.dumps([value - 0.2, value, value + 0.2]), "observed": json.dumps(observed),
             "diff": "{}", "message": "re-run"} for days, value, observed in points]
    exported = cli("export")
    assert exported.exit_code == 0, exported.stderr
    line = next(obj for obj in map(json.loads, exported.stdout.splitlines())
                if obj.get("kind") == "fact" and obj["id"] == fid)
    line["verifications"] = rows  # the fact as the other machine exports it, with its new verifications
    path = tmp_path / f"verifs-{len(list(tmp_path.glob('verifs-*')))}.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    r = cli("import", str(path))
    assert r.exit_code == 0, r.stderr


def shifted_history(cli, tmp_path: Path, fid: str = FACT) -> None:
    """Recorded weekly at ~28 tok/s; then re-verified weekly: 3 times at ~28, 5 times at ~12 on a new build."""
    for i, v in enumerate(HIGH[:4]):
        record_at(cli, 120 - 7 * i, v, fid=fid)
    points = [(90 - 7 * i, v, {"build_commit": OLD}) for i, v in enumerate(HIGH[4:7])]
    points += [(40 - 7 * i, v, {"build_commit": NEW}) for i, v in enumerate(LOW)]
    import_verifications(cli, tmp_path, fid, 4, points)


# ---------------------------------------------------------------- the series


def test_series_holds_versions_and_verifications_in_time_order(cli, registry, tmp_path):
    record_at(cli, 10, 28.0)
    record_at(cli, 30, 27.0)  # recorded later, measured earlier: v2 comes first in time
    import_verifications(cli, tmp_path, FACT, 1, [(5, 26.0, {"build_commit": NEW}), (20, 25.0, {})])
    s = series.of(registry, FACT)
    assert s.sources == ["v2", "verification 2", "v1", "verification 1"]
    assert [p.value for p in s.points] == [27.0, 25.0, 28.0, 26.0]
    assert [p.at for p in s.points] == [ago(30), ago(20), ago(10), ago(5)]
    assert s.points[2].samples == [27.8, 28.0, 28.2] and s.points[3].samples == [25.8, 26.0, 26.2]
    # A verification's conditions: the verified version's identity, with what it observed in their place.
    assert s.points[3].conditions == {"build_commit": NEW, "machine": "gamebox", "model": "35b-a3b"}
    assert s.points[1].conditions == s.points[0].conditions == {"build_commit": OLD, "machine": "gamebox",
                                                                 "model": "35b-a3b"}
    # The current version is the latest measured (v1), not the last recorded (v2).
    assert s.version == 1 and s.current == 2 and s.value == 28.0


def test_failed_verifications_and_other_units_are_not_points(cli, registry, tmp_path, db_url):
    record_at(cli, 10, 28.0)
    import_verifications(cli, tmp_path, FACT, 1, [(5, 26.0, {})])
    from tests.docs_support import verify

    verify(registry, FACT, "unreachable", None, None, "connection refused")  # measured nothing
    assert series.of(registry, FACT).sources == ["v1", "verification 1"]
    with pytest.raises(UsageError, match="cannot measure e2e"):  # a fact's versions are one quantity
        facts.record(registry, NewFact(id=FACT, metric="e2e", value=1.5, identity={"machine": "gamebox"},
                                       measured_at=ago(1)))
    assert series.of(registry, FACT).sources == ["v1", "verification 1"]


def test_reading_many_facts_in_one_pass_gives_the_same_series(cli, registry, tmp_path, monkeypatch):
    # More than series._WHOLE_TABLES ids are read with one query per table instead of IN lists: the same series.
    shifted_history(cli, tmp_path)
    shifted_history(cli, tmp_path, fid="gamebox/a3b/pp512")
    record_at(cli, 10, 28.0, fid="gamebox/a3b/rr32")
    import_verifications(cli, tmp_path, "gamebox/a3b/rr32", 1, [(5, 26.0, {"build_commit": NEW})])
    ids = [FACT, "gamebox/a3b/pp512", "gamebox/none/tg32"]  # not gamebox/a3b/rr32: its rows are left out
    with registry.reader() as conn:
        by_lists = {samples: series.load(conn, ids, samples=samples) for samples in (True, False)}
        monkeypatch.setattr(series, "_WHOLE_TABLES", 0)
        one_pass = {samples: series.load(conn, ids, samples=samples) for samples in (True, False)}
        subset = series.load(conn, [FACT])
        # a range of ids (changes over every fact, a part at a time): gamebox/a3b/rr32 lies inside the range of
        # these ids and is left out all the same
        ranged = series.load_range(conn, ids)
    assert ids[1] < "gamebox/a3b/rr32" < ids[0]
    assert sorted(by_lists[True]) == sorted(ids[:2])
    assert one_pass == by_lists
    assert ranged == by_lists[False]
    assert len(by_lists[True][FACT].points) == 12 and by_lists[True][FACT].points[5].samples
    assert by_lists[False][FACT].points[5].samples is None
    assert list(subset) == [FACT] and subset[FACT] == by_lists[True][FACT]


# ---------------------------------------------------------------- factreg changes


def test_changes_names_the_change_its_levels_and_its_cause(cli):
    for i, v in enumerate(HIGH):
        record_at(cli, 100 - 7 * i, v)
    for i, v in enumerate(LOW):
        record_at(cli, 40 - 7 * i, v, build=NEW)
    r = cli("changes", FACT, "--json")
    assert r.exit_code == 0, r.stderr
    (c,) = r.json()
    assert c["id"] == FACT and c["at"] == ago(40) and c["between"] == [ago(51), ago(40)]
    assert c["points"] == ["v8", "v9"]
    assert c["before"]["median"] == pytest.approx(28.05) and c["before"]["n"] == 8
    assert c["after"]["median"] == 12.0 and c["after"]["n"] == 5
    assert c["before"]["ci_low"] <= 28.05 <= c["before"]["ci_high"] and c["after"]["ci_level"] >= 0.9
    assert c["change"] == pytest.approx(12.0 / 28.05 - 1)
    assert 0 < c["p_value"] < 1e-6
    assert c["conditions_changed"] == {"build_commit": [OLD, NEW]}
    text = cli("changes")
    assert text.exit_code == 0
    assert f"{FACT}  dropped 57.2% between {ago(51)} (v8) and {ago(40)} (v9)" in text.stdout
    assert f"cause candidates: build_commit {OLD} → {NEW}" in text.stdout
    assert "before  28.1 tok/s [27.6, 28.4] (99.22% interval, 8 points)" in text.stdout
    assert "after   12.0 tok/s [11.7, 12.4] (93.75% interval, 5 points)" in text.stdout
    assert "1 change(s) in 1 fact(s)" in text.stderr


def test_what_a_run_records_about_itself_is_never_named_as_a_cause(cli, registry, tmp_path):
    """A verification's `observed` holds, beside the identity conditions it saw, what the run recorded about itself:
    the server's uptime, and keys the fact keeps as info. They differ at every point, so at any change they
    "changed"; only identity conditions may be named."""
    for i, v in enumerate(HIGH[:4]):
        record_at(cli, 120 - 7 * i, v, extra=("-i", "gpu_temp_c=61"))
    points = [(90 - 7 * i, v, {"build_commit": OLD, "uptime_s": str(86400 + 3600 * i), "gpu_temp_c": str(60 + i)})
              for i, v in enumerate(HIGH[4:7])]
    points += [(40 - 7 * i, v, {"build_commit": NEW, "uptime_s": str(600 + 60 * i), "gpu_temp_c": "71"})
               for i, v in enumerate(LOW)]
    import_verifications(cli, tmp_path, FACT, 4, points)
    # A second fact whose new level begins at a version (which records no uptime) after verifications that did.
    other = "gamebox/a3b/pp512"
    for i, v in enumerate(HIGH[:2]):
        record_at(cli, 120 - 7 * i, v, fid=other)
    import_verifications(cli, tmp_path, other, 2, [(100 - 7 * i, v, {"uptime_s": "86400"})
                                                   for i, v in enumerate(HIGH[2:6])])
    for i, v in enumerate(LOW):
        record_at(cli, 40 - 7 * i, v, fid=other, build=NEW)
    found = cli("changes", "--json").json()
    assert {c["id"]: c["conditions_changed"] for c in found} == {FACT: {"build_commit": [OLD, NEW]},
                                                                 other: {"build_commit": [OLD, NEW]}}
    text = cli("changes").stdout
    assert text.count(f"cause candidates: build_commit {OLD} → {NEW}\n") == 2
    assert "uptime_s" not in text and "gpu_temp_c" not in text
    # A verification's point: the version's identity conditions, with the observed build in place of the recorded one.
    assert series.of(registry, FACT).points[-1].conditions == {"build_commit": NEW, "machine": "gamebox",
                                                               "model": "35b-a3b"}


def test_uptime_is_info_even_when_given_as_an_identity_condition(cli):
    f = cli("record", "gamebox/a3b/ttft", "-m", "ttft", "--samples", "0.13", "-c", "model=a3b", "-c",
            "endpoint=http://gb", "-c", "uptime_s=40", "--json").json()
    assert "uptime_s" not in f["conditions"]["identity"] and f["conditions"]["info"]["uptime_s"] == "40"
    assert "cold" in f["flags"]


def test_a_change_with_no_condition_change_says_so(cli):
    for i, v in enumerate(HIGH[:5] + LOW):
        record_at(cli, 100 - 7 * i, v)
    (c,) = cli("changes", "--json").json()
    assert c["conditions_changed"] == {}
    assert "cause candidates: no recorded condition changed" in cli("changes", FACT).stdout


def test_a_flat_history_and_a_short_one_report_nothing(cli):
    for i, v in enumerate(HIGH + HIGH):
        record_at(cli, 200 - 7 * i, v)
    for i, v in enumerate([28.0, 12.0, 12.1]):
        record_at(cli, 10 - i, v, fid="short/tg32")
    r = cli("changes", "--json")
    assert r.exit_code == 0 and r.json() == []
    assert "No changes found." in cli("changes").stderr


def test_since_keeps_the_changes_that_began_after_it(cli):
    for i, v in enumerate(HIGH[:5] + LOW[:4] + HIGH):
        record_at(cli, 200 - 7 * i, v)
    found = cli("changes", "--json").json()
    assert [c["at"] for c in found] == [ago(165), ago(137)]
    assert [c["change"] < 0 for c in found] == [True, False]
    assert [c["at"] for c in cli("changes", "--since", ago(150, date_only=True), "--json").json()] == [ago(137)]
    assert cli("changes", "--since", ago(100), "--json").json() == []


@pytest.mark.parametrize("args, message", [
    (["no/such"], "no fact 'no/such'"),
    (["BAD ID"], "invalid fact id"),
    (["--since", "last week"], "invalid --since"),
    (["--min-segment", "1"], "min_segment must be an integer ≥ 2"),
    (["--alpha", "2"], "alpha must be between 0 and 1"),
])
def test_changes_usage_errors_are_one_line(cli, args, message):
    record_at(cli, 1, 28.0)
    r = cli("changes", *args)
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: ") and message in r.stderr and r.stderr.count("\n") == 1


# ---------------------------------------------------------------- shifted


def test_a_fact_whose_latest_level_began_after_its_value_is_shifted(cli, registry, tmp_path):
    shifted_history(cli, tmp_path)
    r = cli("status", "--json")
    assert r.exit_code == 1
    (f,) = r.json()["facts"]
    assert f["status"] == "shifted" and f["severity"] == 2
    assert f"build_commit went {OLD} → {NEW}" in f["status_reason"] and "dropped 57" in f["status_reason"]
    assert "the recorded 27.9 tok/s (v4" in f["status_reason"]
    assert cli("status", "--json").json()["summary"]["counts"] == {"shifted": 1}
    # Everything that lists facts says the same.
    assert facts.get(registry, FACT)["status"] == "shifted"
    assert cli("show", FACT, "--json").json()["status"] == "shifted"


def test_a_recorded_value_inside_the_latest_level_is_not_shifted(cli, registry, tmp_path):
    # Versions: the current one is the newest point, so it is the latest level.
    for i, v in enumerate(HIGH[:5] + LOW):
        record_at(cli, 100 - 7 * i, v)
    assert cli("changes", "--json").json() != []
    assert facts.get(registry, FACT)["status"] == "aging"
    # An excursion that came back: the latest level holds the recorded value again.
    for i, v in enumerate(HIGH[:5]):
        record_at(cli, 200 - 7 * i, v, fid="back/tg32")
    points = [(160 - 7 * i, v, {}) for i, v in enumerate(LOW[:4] + HIGH)]
    import_verifications(cli, tmp_path, "back/tg32", 5, points)
    assert len(cli("changes", "back/tg32", "--json").json()) == 2
    assert facts.get(registry, "back/tg32")["status"] != "shifted"


def test_a_decision_relying_on_a_shifted_fact_needs_review(cli, tmp_path):
    record_at(cli, 130, 28.0)
    r = cli("decision", "add", "gamebox decodes for the voice line", "--cites", FACT, "--out", str(tmp_path),
            "--date", ago(125, date_only=True))
    assert r.exit_code == 0, r.stderr
    shifted_history(cli, tmp_path)
    out = cli("status")
    assert "needs review       decision 1: gamebox decodes for the voice line" in out.stdout
    assert f"decision 1: gamebox decodes for the voice line — {FACT} is shifted: its level dropped" in out.stdout


@pytest.mark.postgres
def test_history_and_shifted_on_postgresql(cli, tmp_path, pg_url, monkeypatch):
    """The same queries on PostgreSQL; the imported verifications carry no number (the database gives one)."""
    monkeypatch.setenv("FACTREG_DB", pg_url)
    shifted_history(cli, tmp_path)
    assert [f["status"] for f in cli("status", "--json").json()["facts"]] == ["shifted"]
    (c,) = cli("changes", "--json").json()
    assert c["points"] == ["verification 3", "verification 4"] and c["conditions_changed"] == {"build_commit": [OLD, NEW]}
    assert cli("show", FACT, "--json").json()["status"] == "shifted"


def test_refuted_outranks_shifted(cli, registry, tmp_path):
    shifted_history(cli, tmp_path)
    from tests.docs_support import verify

    verify(registry, FACT, "refuted", 12.0, 0.3, "tg32 now 12.0 tok/s")
    assert facts.get(registry, FACT)["status"] == "refuted"


def test_docs_check_fails_on_a_citation_of_a_shifted_fact(cli, tmp_path):
    shifted_history(cli, tmp_path)
    doc = tmp_path / "SKILL.md"
    doc.write_text(f'Decoding: <!-- fact: {FACT} format="{{value:.0f}} tok/s" -->28 tok/s<!-- /fact -->.\n',
                   encoding="utf-8")
    r = cli("docs", "check", str(doc), "--json")
    assert r.exit_code == 1
    (p,) = r.json()["problems"]
    assert p["kind"] == "shifted" and p["fact_id"] == FACT and p["line"] == 1
    assert f"factreg changes {FACT}" in p["fix"]


# ---------------------------------------------------------------- verify --due


@pytest.fixture
def fake_probe(monkeypatch):
    """probe.remeasure replaced by recorded answers: url → value; each call advances a fake clock by 60 s."""
    from factreg import clock
    from factreg.measure import probe
    from factreg.measure.measurement import Measurement

    calls: list[list[str]] = []
    now = [0.0]
    answers: dict[str, tuple[float, dict]] = {}

    def remeasure(method, group, settings):
        calls.append(sorted(f["id"] for f in group))
        now[0] += 60.0
        value, observed = answers[method["url"]]
        return {f["id"]: Measurement(samples=[value * 0.99, value, value * 1.01, value, value],
                                     observed=dict(observed)) for f in group}

    monkeypatch.setattr(probe, "remeasure", remeasure)
    monkeypatch.setattr(clock, "elapsed", lambda: now[0])
    return calls, answers


def probe_fact(registry, fid: str, url: str, days: float, value: float = 1.0) -> None:
    facts.record(registry, NewFact(id=fid, metric="ttft", samples=[value * 0.99, value, value * 1.01, value, value],
                                   identity={"endpoint": url, "model": "m"}, measured_at=ago(days),
                                   method={"kind": "probe", "url": url}))


def test_due_verifies_only_stale_and_aging_facts_stale_first(cli, registry, fake_probe):
    calls, answers = fake_probe
    for fid, url, days in (("a/fresh", "u1", 3), ("b/aging", "u2", 40), ("c/stale", "u3", 120)):
        probe_fact(registry, fid, url, days)
        answers[url] = (1.0, {"endpoint": url})
    facts.record(registry, NewFact(id="d/manual", metric="ttft", value=1.0, measured_at=ago(120)))
    r = cli("verify", "--due", "--json")
    assert r.exit_code == 0, r.stderr
    out = r.json()
    assert calls == [["c/stale"], ["b/aging"]]
    assert [x["id"] for x in out["results"]] == ["c/stale", "b/aging"]
    assert {x["verdict"] for x in out["results"]} == {"confirmed"}
    assert out["not_rerunnable"] == ["d/manual"] and out["left"] == []
    assert {(c["id"], c["before"], c["after"]) for c in out["status_changes"]} == {
        ("b/aging", "aging", "fresh"), ("c/stale", "stale", "fresh")}
    calls.clear()
    again = cli("verify", "--due")  # nothing is due any more (the manual fact cannot be re-run)
    assert calls == [] and again.exit_code == 0
    assert "0 fact(s) verified" in again.stdout and "no status changed" in again.stdout


def test_due_stops_starting_runs_when_the_budget_is_spent(cli, registry, fake_probe):
    calls, answers = fake_probe  # every run takes 60 s on the fake clock
    for i in range(4):
        probe_fact(registry, f"f/{i}", f"u{i}", 100 + i)
        answers[f"u{i}"] = (1.0, {"endpoint": f"u{i}"})
    r = cli("verify", "--due", "--budget", "150s", "--json")
    out = r.json()
    # 60 s, then 120 s: a third run would end at 180 s, past the budget.
    assert calls == [["f/3"], ["f/2"]] and out["left"] == ["f/1", "f/0"]
    text = cli("verify", "--due", "--budget", "1m")
    assert "left for the next run (budget spent): f/0" in text.stdout
    assert calls[2:] == [["f/1"]]


def test_due_summary_names_new_change_points_and_status_changes(cli, registry, tmp_path, fake_probe):
    calls, answers = fake_probe
    probe_fact(registry, "voice/ttft", "u", 200, value=0.5)
    points = [(190 - 7 * i, 0.5 + d, {"endpoint": "u"}) for i, d in enumerate((0.01, -0.01, 0.0, 0.02))]
    points += [(100 - 7 * i, 0.9 + d, {"endpoint": "u", "thinking": "on"}) for i, d in enumerate((0.01, -0.01, 0.0))]
    import_verifications(cli, tmp_path, "voice/ttft", 1, points, verdict="inconclusive")
    assert cli("changes", "--json").json() == []  # three points after the step: not yet a change
    answers["u"] = (0.9, {"endpoint": "u", "thinking": "on"})
    r = cli("verify", "--due")
    assert r.exit_code == 1  # the re-run refutes 0.5 s
    assert "1 new change point(s):" in r.stdout
    assert "voice/ttft: rose 80.0% (0.5 → 0.9)" in r.stdout and "when thinking went (unset) → on" in r.stdout
    assert "voice/ttft: stale → refuted" in r.stdout


def test_due_usage_errors(cli, registry):
    for args in (["--budget", "10m"], ["--due", "a/b"], ["--due", "--all"], ["--due", "--budget", "soon"]):
        r = cli("verify", *args)
        assert r.exit_code == 2 and r.stderr.startswith("Error: "), (args, r.stderr)


# ---------------------------------------------------------------- the case study as history


def test_case_study_gamebox_decode_dropped_when_the_build_changed(cli, registry, tmp_path):
    """gamebox decode (tg32 of 35B-A3B) is measured monthly at ~28 tok/s on build 8cf427ff, and a skill doc cites
    it. Early this month the build changes; the cron machine's weekly re-verifications (imported from its export)
    observe the new build and ~12 tok/s. `changes` names the drop and its cause; the fact is `shifted`; `docs
    check` fails on the skill doc that still says 28 tok/s."""
    monthly = [28.3, 27.6, 28.1, 28.9, 27.8, 28.4, 27.5, 28.0, 28.6, 27.9, 28.2]
    for k, v in enumerate(monthly):
        record_at(cli, 30 * (len(monthly) + 1 - k), v, fid="gamebox/35b-a3b/tg32")
    skill = tmp_path / "skills" / "gamebox-llm.md"
    skill.parent.mkdir()
    skill.write_text("# gamebox\n\nDecoding runs at <!-- fact: gamebox/35b-a3b/tg32 format=\"{value:.0f} tok/s\" -->"
                     "28 tok/s<!-- /fact --> on this machine.\n", encoding="utf-8")
    assert cli("docs", "check", str(skill)).exit_code == 0  # aging, not failing: the doc holds
    weekly = [11.9, 12.6, 11.4, 12.2]
    import_verifications(cli, tmp_path, "gamebox/35b-a3b/tg32", len(monthly),
                         [(28 - 7 * i, v, {"build_commit": NEW, "machine": "gamebox"}) for i, v in enumerate(weekly)],
                         verdict="conditions_changed")
    (c,) = cli("changes", "gamebox/35b-a3b/tg32", "--json").json()
    assert c["between"] == [ago(60), ago(28)] and c["points"] == [f"v{len(monthly)}", "verification 1"]
    assert c["conditions_changed"] == {"build_commit": [OLD, NEW]}
    assert c["before"]["median"] == 28.1 and c["after"]["median"] == pytest.approx(12.05)
    assert c["change"] == pytest.approx(12.05 / 28.1 - 1) and c["p_value"] < 0.01
    text = cli("changes", "--since", ago(45, date_only=True)).stdout
    assert f"cause candidates: build_commit {OLD} → {NEW}" in text and "dropped 57.1%" in text
    status = cli("status")
    assert status.exit_code == 1 and status.stdout.startswith("shifted ")
    check = cli("docs", "check", str(skill))
    assert check.exit_code == 1
    assert f"{skill}:3:18: gamebox/35b-a3b/tg32: shifted: cites gamebox/35b-a3b/tg32, which is shifted" in check.stdout
    assert f"build_commit went {OLD} → {NEW}" in check.stdout
