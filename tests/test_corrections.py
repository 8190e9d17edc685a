"""correct: supersede a fact, write the correction note, sync the docs, commit exactly those files."""

from __future__ import annotations

from pathlib import Path

import pytest

from factreg import clock, fmt
from factreg.errors import NotFound
from factreg.publish import corrections
from factreg.registry import facts
from tests.decisions_support import add_verification, git, init_repo, seed

pytestmark = pytest.mark.usefixtures("story_clock")  # the case study, told at its own time

DOC = "# Voice\n\nFull reply in <!-- fact: night/35b-a3b/e2e -->1.07 s<!-- /fact --> on 35B-A3B.\n"


def today() -> str:
    return clock.today()


@pytest.fixture
def project(tmp_path: Path, registry, monkeypatch):  # type: ignore[no-untyped-def]
    """A docs repository with a .factreg project, a doc citing the 02:30 e2e, and a decision relying on it."""
    repo = init_repo(tmp_path / "proj")
    (repo / ".factreg").mkdir()
    (repo / ".factreg/config.toml").write_text('[docs]\nroots = ["docs"]\n')
    (repo / "docs").mkdir()
    (repo / "docs/voice.md").write_text(DOC)
    git(repo, "add", ".factreg/config.toml", "docs/voice.md")
    git(repo, "commit", "-q", "-m", "docs")
    monkeypatch.chdir(repo)
    seed(registry)
    return repo


def add_decision(cli) -> None:  # type: ignore[no-untyped-def]
    r = cli(
        "decision",
        "add",
        "Voice front end → 35B-A3B",
        "--cites",
        "night/35b-a3b/e2e,night/35b-a3b/ttft",
        "--date",
        "2026-10-26",
        "--commit",
    )
    assert r.exit_code == 0, r.stderr


def test_correct_by_fact_writes_note_syncs_docs_and_flags_decision(cli, project, registry):
    """`--by X --as X`: the claim changes, so the fact is superseded by X (the default keeps the id: below)."""
    add_decision(cli)
    r = cli(
        "correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--as", "day/35b-a3b/e2e", "--cause",
        "measured cold with a toy body", "--json"
    )
    assert r.exit_code == 0, r.stderr
    out = r.json()
    note = project / "facts/corrections" / f"{today()}-night-35b-a3b-e2e.md"
    assert out["note"] == str(note) and note.is_file()
    text = note.read_text(encoding="utf-8")
    assert "| e2e | 1.07 s | 2.27 ± 1.14 s |" in text
    assert "| 95% interval | — | [-0.0481, 5.63] s |" in text
    assert "| n | 1 | 3 |" in text
    assert "| body_sha256 | identity |" in text and "| uptime_s | info | 40 | 36000 |" in text
    assert "- measured cold with a toy body — stated when the fact was corrected" in text
    assert "- cold server — old value measured 40 s after a server restart (flag cold)" in text
    assert "- old value rests on few samples — n=1" in text
    assert "- another request body — sha256 " in text
    assert "- [docs/voice.md](../../docs/voice.md) line 3: cited 1.07 s" in text
    assert (
        "[decision 1: Voice front end → 35B-A3B](../../decisions/0001-voice-front-end-35b-a3b.md) — needs review"
        in text
    )
    old = facts.get(registry, "night/35b-a3b/e2e")
    assert old["status"] == "superseded" and old["superseded_by"] == "day/35b-a3b/e2e"
    # docs sync rewrote the citation to the successor.
    assert "<!-- fact: day/35b-a3b/e2e -->2.27 ± 1.14 s<!-- /fact -->" in (project / "docs/voice.md").read_text()
    dec = (project / "decisions/0001-voice-front-end-35b-a3b.md").read_text()
    assert 'status: "needs review"' in dec
    assert sorted(Path(p).relative_to(project).as_posix() for p in out["changed"]) == [
        "decisions/0001-voice-front-end-35b-a3b.md",
        "docs/voice.md",
        f"facts/corrections/{today()}-night-35b-a3b-e2e.md",
    ]
    assert out["decisions"] == [1]


def test_commit_touches_only_correction_files_and_not_the_users(cli, project):
    add_decision(cli)
    (project / "unrelated.md").write_text("user's notes\n")
    git(project, "add", "unrelated.md")
    (project / "README.md").write_text("# project\nwork in progress\n")
    head = git(project, "rev-parse", "HEAD").strip()
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--commit")
    assert r.exit_code == 0, r.stderr
    assert git(project, "rev-parse", "HEAD~1").strip() == head
    committed = sorted(git(project, "show", "--name-only", "--format=", "HEAD").split())
    assert committed == [
        "decisions/0001-voice-front-end-35b-a3b.md",
        "docs/voice.md",
        f"facts/corrections/{today()}-night-35b-a3b-e2e.md",
    ]
    status = git(project, "status", "--porcelain").splitlines()
    assert "A  unrelated.md" in status and " M README.md" in status
    assert not any(s.endswith((".md",)) and ("facts/" in s or "docs/" in s or "decisions/" in s) for s in status)


def test_correct_from_verification_records_a_new_version_of_the_same_id(cli, project, registry):
    pk = add_verification(
        registry,
        "night/35b-a3b/ttft",
        "refuted",
        samples=[0.42, 0.45, 0.47, 0.44, 0.46],
        observed={"build": "b6100"},
        verified_at="2026-10-27T10:00:00Z",
        message="warm ttft is 0.45 s",
    )
    r = cli("correct", "night/35b-a3b/ttft", "--verification", str(pk), "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["new"] == "night/35b-a3b/ttft@v2" and r.json()["same_id"] is True
    new = facts.get(registry, "night/35b-a3b/ttft")
    assert new["version"] == 2 and new["superseded_by"] is None and new["status"] == "fresh"
    assert new["samples"] == [0.42, 0.45, 0.47, 0.44, 0.46] and new["value"] == 0.45
    assert new["conditions"]["identity"]["build"] == "b6100" and new["subject"] == "night/35b-a3b"
    assert new["measured_at"] == "2026-10-27T10:00:00Z"
    old = facts.history(registry, "night/35b-a3b/ttft")[0]
    assert old["version"] == 1 and old["current"] is False
    assert old["corrected"]["by_version"] == 2 and old["corrected"]["note"].startswith("facts/corrections/")
    text = Path(r.json()["note"]).read_text()
    assert f"(recorded from verification {pk}, refuted, 2026-10-27T10:00:00Z)" in text
    assert "- the old value recorded no conditions for build: cannot be compared" in text
    assert "| samples | — | 0.420, 0.450, 0.470, 0.440, 0.460 |" in text


def test_failed_verification_or_other_metric_is_refused_and_writes_nothing(cli, project, registry):
    pk = add_verification(registry, "night/27b-gateway/ttft", "auth_failed", message="HTTP 401")
    r = cli("correct", "night/27b-gateway/ttft", "--verification", str(pk))
    assert r.exit_code == 2 and "could not measure (auth_failed)" in r.stderr
    r = cli("correct", "night/35b-a3b/ttft", "--by", "day/35b-a3b/e2e")
    assert r.exit_code == 2 and "same metric" in r.stderr
    r = cli("correct", "night/35b-a3b/ttft", "--verification", str(pk))
    assert r.exit_code == 2 and "not night/35b-a3b/ttft" in r.stderr
    assert cli("correct", "night/35b-a3b/ttft").exit_code == 2
    assert not (project / "facts").exists()
    assert facts.get(registry, "night/35b-a3b/ttft")["superseded_by"] is None
    assert facts.get(registry, "night/27b-gateway/ttft")["superseded_by"] is None
    assert corrections.list_corrections(registry) == []


def test_correcting_a_superseded_fact_is_refused(cli, project):
    assert cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--as", "day/35b-a3b/e2e").exit_code == 0
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/27b/e2e")
    assert r.exit_code == 2 and "already superseded" in r.stderr


def test_correcting_the_same_id_twice_corrects_its_current_version(cli, project, registry):
    assert cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e").exit_code == 0
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/27b/e2e", "--json")
    assert r.exit_code == 0, r.stderr
    assert (r.json()["old"], r.json()["new"]) == ("night/35b-a3b/e2e@v2", "night/35b-a3b/e2e@v3")
    history = facts.history(registry, "night/35b-a3b/e2e")
    assert [(v["version"], v["current"], (v.get("corrected") or {}).get("by_version")) for v in
            sorted(history, key=lambda v: v["version"])] == [(1, False, 2), (2, False, 3), (3, True, None)]
    bad = cli("correct", "night/35b-a3b/e2e", "--by", "day/27b/e2e", "--as", "x/y")
    assert bad.exit_code == 2 and "with --by, --as names that fact" in bad.stderr


def test_probable_causes_from_flags_and_diffs(registry):
    seed(registry)
    old = facts.get(registry, "night/flash-next-thinking/e2e")
    new = {**facts.get(registry, "night/flash-next/e2e")}
    new["conditions"] = {"identity": {**new["conditions"]["identity"], "build": "b7000"}, "info": {}}
    causes = corrections.probable_causes(old, new)
    assert causes[0] == "thinking on → off (old value measured with thinking on) (recorded in both facts' conditions)"
    assert "the old value recorded no conditions for build: cannot be compared" in causes[1]
    assert causes[-1] == "old value rests on few samples (n=1)"
    assert "endpoint differs" not in " ".join(causes)


def test_note_name():
    assert corrections.note_name("2026-10-26", "gamebox/a3b/tg32") == "2026-10-26-gamebox-a3b-tg32.md"


def test_note_is_rendered_before_the_registry_changes(cli, project, registry, tmp_path):
    pk = add_verification(registry, "night/35b-a3b/ttft", "refuted", samples=[0.42, 0.45, 0.47])
    broken = tmp_path / "templates"
    broken.mkdir()
    (broken / "correction.md.j2").write_text("{{ c.no_such_field.x }}\n")
    r = cli("correct", "night/35b-a3b/ttft", "--verification", str(pk), "--templates", str(broken))
    assert r.exit_code == 2 and r.stderr.startswith("Error: template 'correction.md.j2'")
    assert facts.get(registry, "night/35b-a3b/ttft")["superseded_by"] is None
    assert facts.get(registry, "night/35b-a3b/ttft")["version"] == 1
    with pytest.raises(NotFound):
        facts.get(registry, "night/35b-a3b/ttft", 2)
    assert corrections.list_corrections(registry) == []
    assert not (project / "facts").exists()


def test_note_shows_the_fact_as_recorded_when_the_preview_differs(cli, project, registry, monkeypatch):
    pk = add_verification(registry, "night/35b-a3b/ttft", "refuted", samples=[0.42, 0.45, 0.47])
    real = facts.preview
    monkeypatch.setattr(facts, "preview", lambda new, version=1: {**real(new, version), "version": 7,
                                                                  "value": 123456.0})
    r = cli("correct", "night/35b-a3b/ttft", "--verification", str(pk), "--json")
    assert r.exit_code == 0, r.stderr
    text = Path(r.json()["note"]).read_text()
    new = facts.get(registry, "night/35b-a3b/ttft")
    assert new["version"] == 2 and "| fact | `night/35b-a3b/ttft` v1 | `night/35b-a3b/ttft` v2 |" in text
    assert " v7" not in text and "is corrected by its v2" in text and "marked corrected" in text
    row = next(line for line in text.splitlines() if line.startswith("| ttft |"))
    assert row.endswith(f"| {fmt.value(new['value'], new['spread'], new['unit'])} |"), row
