"""Where factreg writes: imported and stored fields cannot move a file out of its folder, add front-matter lines,
land in `.git` or a dot-folder, or overwrite a file factreg did not write; report pages never share a name.

docs/security.md states the properties; each test here shows one, in real folders and git repositories."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from factreg.errors import ConfigError, UsageError
from factreg.publish import decisions, report
from factreg.publish import writer as publish
from factreg.registry import facts, ids
from factreg.registry.facts import NewFact
from tests.decisions_support import git, init_repo, seed

pytestmark = pytest.mark.usefixtures("story_clock")

GOOD_DECISION = {
    "kind": "decision", "number": 1, "title": "Voice front end", "slug": "voice-front-end", "status": "accepted",
    "date": "2026-10-26", "decided_by": "[]", "context": None, "outcome": None,
    "created_at": "2026-10-26T10:00:00Z", "reverted_at": None, "revert_reason": None, "revert_fact": None,
    "superseded_by": None,
    "cites": [{"fact_id": "night/35b-a3b/e2e", "fact_version": 1, "value": 1.07, "spread": None, "unit": "s"}],
}  # fmt: skip
GOOD_CORRECTION = {
    "kind": "correction", "pk": 1, "old_fact_id": "night/35b-a3b/e2e", "old_version": 1,
    "new_fact_id": "day/35b-a3b/e2e", "new_version": 1, "verification": None, "cause": None,
    "created_at": "2026-10-27T10:00:00Z", "note_path": "facts/corrections/2026-10-27-night-35b-a3b-e2e.md",
}  # fmt: skip

# Each hostile field of an imported decision or correction: (line kind, field, value).
HOSTILE = [
    ("decision", "slug", "/../../../x"),
    ("decision", "slug", "../x"),
    ("decision", "slug", "a/b"),
    ("decision", "slug", ".hidden"),
    ("decision", "slug", "Upper"),
    ("decision", "slug", "ok\n"),
    ("decision", "slug", ""),
    ("decision", "date", "2026-10-26\nstatus: accepted"),
    ("decision", "date", "2026-10-26\n"),
    ("decision", "date", "2026-13-45"),
    ("decision", "date", "26/10/2026"),
    ("decision", "date", 20261026),
    ("decision", "reverted_at", "2026-10-27\nfactreg-number: 9"),
    ("decision", "created_at", "yesterday"),
    ("decision", "status", "accepted\nfactreg-number: 9"),
    ("decision", "status", "whatever"),
    ("decision", "number", "1"),
    ("decision", "number", 0),
    ("decision", "number", True),
    ("decision", "title", ["x"]),
    ("decision", "decided_by", '["a"'),
    ("decision", "decided_by", "[1, 2]"),
    ("decision", "revert_fact", "../../x"),
    ("decision", "superseded_by", 1),
    ("decision", "superseded_by", 99),
    ("decision", "cites", [{"fact_id": "../../x", "fact_version": 1, "value": 1.0, "spread": None, "unit": "s"}]),
    ("decision", "cites", [{"fact_id": "a/b", "fact_version": 0, "value": 1.0, "spread": None, "unit": "s"}]),
    ("decision", "cites", [{"fact_id": "a/b", "fact_version": 1, "value": "1", "spread": None, "unit": "s"}]),
    ("decision", "cites", [{"fact_id": "a/b", "fact_version": 1, "value": 1.0, "unit": "s", "decision": 7}]),
    ("correction", "old_fact_id", "../../x"),
    ("correction", "new_fact_id", "/etc/x"),
    ("correction", "old_version", -1),
    ("correction", "created_at", "2026-10-27T10:00:00Z\nx"),
    ("correction", "note_path", "../../../x.md"),
    ("correction", "note_path", "facts/corrections/../../x.md"),
    ("correction", "note_path", "/tmp/x.md"),
    ("correction", "note_path", "facts/corrections/.git/x.md"),
]


def _line(kind: str, field: str, value: object) -> dict:
    base = dict(GOOD_DECISION if kind == "decision" else GOOD_CORRECTION)
    base[field] = value
    return base


@pytest.mark.parametrize(("kind", "field", "value"), HOSTILE, ids=[f"{k}.{f}={v!r}" for k, f, v in HOSTILE])
def test_imported_decision_and_correction_fields_are_checked_like_their_commands(cli, registry, tmp_path, kind,
                                                                                 field, value):
    seed(registry)
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(_line(kind, field, value)) + "\n", encoding="utf-8")
    r = cli("import", str(src))
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("Error:") and r.stderr.count("\n") == 1, r.stderr
    assert decisions.list_decisions(registry) == []
    assert registry.query("SELECT count(*) AS n FROM correction")[0]["n"] == 0


def test_the_good_lines_import(cli, registry, tmp_path):
    """The control: the same lines without a hostile field import, and their files are written."""
    seed(registry)
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD_DECISION) + "\n" + json.dumps(GOOD_CORRECTION) + "\n", encoding="utf-8")
    r = cli("import", str(src))
    assert r.exit_code == 0, r.stderr
    assert [d["slug"] for d in decisions.list_decisions(registry)] == ["voice-front-end"]


def _tamper(registry, sql: str, *args: object) -> None:  # type: ignore[no-untyped-def]
    con = sqlite3.connect(registry.sqlite_path)
    with con:
        con.execute(sql, args)
    con.close()


def test_revert_of_a_decision_with_a_hostile_slug_writes_inside_the_project(cli, registry, tmp_path):
    """The slug `/../../../x` edited into the database: `decision revert` writes `decisions/0001-x.md`."""
    seed(registry)
    project = tmp_path / "a" / "b" / "c" / "project"
    project.mkdir(parents=True)
    assert cli("decision", "add", "Voice", "--cites", "night/35b-a3b/e2e", "--out", str(project)).exit_code == 0
    _tamper(registry, "UPDATE decision SET slug = ? WHERE number = 1", "/../../../x")
    r = cli("decision", "revert", "1", "--because", "day/35b-a3b/e2e", "--out", str(project))
    assert r.exit_code == 0, r.stderr
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.md"))
    assert written == ["a/b/c/project/decisions/0001-voice.md", "a/b/c/project/decisions/0001-x.md"]


def test_dates_with_a_newline_add_no_front_matter_line(cli, registry, tmp_path):
    seed(registry)
    out = tmp_path / "site"
    for flag in ("2026-10-26\nstatus: accepted", "2026-10-26\n", "2026-02-30"):
        r = cli("decision", "add", "Voice", "--cites", "night/35b-a3b/e2e", "--date", flag, "--out", str(out))
        assert r.exit_code == 2 and r.stderr.startswith("Error: --date must be YYYY-MM-DD"), r.stderr
    assert cli("decision", "add", "Voice", "--cites", "night/35b-a3b/e2e", "--out", str(out)).exit_code == 0
    r = cli("decision", "revert", "1", "--because", "x", "--date", "2026-10-27\nfactreg-number: 9", "--out", str(out))
    assert r.exit_code == 2 and decisions.get(registry, 1)["recorded_status"] == "accepted"
    # Edited into the database: the front matter still has exactly its own keys, the date a quoted string.
    _tamper(registry, "UPDATE decision SET date = ? WHERE number = 1", "2026-10-26\nstatus: owned")
    assert cli("decision", "revert", "1", "--because", "x", "--out", str(out)).exit_code == 0
    _tamper(registry, "UPDATE decision SET reverted_at = ? WHERE number = 1", "2026-10-27\nfactreg-number: 9")
    decisions.write_files(registry, None, out)
    text = (out / "decisions/0001-voice.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["status"] == "reverted" and front["factreg-number"] == 1
    assert front["date"] == "2026-10-26\nstatus: owned"
    assert front["factreg-reverted"]["date"] == "2026-10-27\nfactreg-number: 9"


@pytest.mark.parametrize("bad", ["2026-10-26\n", "2026-10-26\nx: y", "2026-10-26T00:00:00Z", "10/26/2026", "",
                                 "２０２６-１０-２６", "2026-00-10"])
def test_check_date_refuses(bad):
    with pytest.raises(UsageError):
        from factreg import clock

        clock.check_date(bad)


def test_every_write_is_guarded(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    for bad in ("../x.md", ".git/hooks/pre-commit", "facts/.git/config", "facts/.hidden/x.md", ".env",
                "decisions/0001-/../../../x.md"):
        with pytest.raises(ConfigError, match="refusing to write"):
            publish.write({root / bad: "x"}, root)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    # A --out inside a .git folder is refused too.
    with pytest.raises(ConfigError, match=r"\.git"):
        publish.write({tmp_path / ".git/site/x.md": "x"}, tmp_path / ".git/site")
    # One bad path and nothing of the batch is written.
    with pytest.raises(ConfigError):
        publish.write({root / "ok.md": "x", root / ".git/x": "x"}, root)
    assert not (root / "ok.md").exists()


def test_slug_ids_are_matched_whole():
    for bad in ("a/b\n", "a\n/b", "ok\n"):
        with pytest.raises(UsageError):
            ids.check_id(bad)
        with pytest.raises(UsageError):
            ids.check_slug(bad)
    assert ids.check_slug("voice-front-end-35b-a3b") == "voice-front-end-35b-a3b"


# ---------------------------------------------------------------- report page names and files factreg did not write

SEGMENTS = ["a", "a.md", "a.svg", "stale", "stale.fact", "stale.fact.fact", "readme", "llms", ".git", ".x.fact",
            "corrections", "x.fact", "index.fact"]


def test_page_names_are_injective_and_never_a_dot_folder():
    """Every id of one or two segments from names that clash: no two share a page or chart, no page or chart sits
    where another one's folder goes, none is a report file, and no part starts with a dot."""
    fact_ids = [a for a in SEGMENTS] + [f"{a}/{b}" for a in SEGMENTS for b in SEGMENTS]
    fact_ids = [i for i in fact_ids if not any(p in (".", "..") for p in i.split("/"))]
    files: dict[str, str] = {}
    for fid in fact_ids:
        page = report.page_name(fid)
        for name in (page, page[:-3] + ".svg"):
            assert name not in files, f"{fid} and {files.get(name)} share {name}"
            files[name] = fid
    folders = {"/".join(name.split("/")[:k]) for name in files for k in range(1, name.count("/") + 1)}
    assert not folders & set(files), sorted(folders & set(files))[:3]
    assert not {"corrections", *report.REPORT_FILES, report.MANIFEST} & (set(files) | folders)
    assert not [n for n in files if any(part.startswith(".") for part in n.split("/"))]
    assert len(files) == 2 * len(fact_ids) == 2 * 182


def _record(registry, *fact_ids: str) -> None:  # type: ignore[no-untyped-def]
    for fid in fact_ids:
        facts.record(registry, NewFact(id=fid, metric="ttft", value=0.5, measured_at="2026-10-20T00:00:00Z"))


def test_clashing_ids_get_a_page_each_and_none_in_a_dot_folder(cli, registry, tmp_path):
    repo = init_repo(tmp_path / "proj")
    hook = repo / ".git/hooks/pre-commit"
    ids_ = ["stale", "stale.fact", "a", "a.md/x", ".git/hooks/pre-commit", "corrections/x"]
    _record(registry, *ids_)
    r = cli("report", "--out", str(repo), "--json")
    assert r.exit_code == 0, r.stderr
    pages = [p for p in r.json()["written"] if p.endswith(".md") and "/facts/" in p
             and Path(p).name not in report.REPORT_FILES]
    assert len(pages) == len(set(pages)) == len(ids_)
    assert not hook.exists() and not (repo / "facts/.git").exists()
    assert (repo / "facts/+.git/hooks/pre-commit.md").is_file()
    assert "`stale.fact`" in (repo / "facts/stale.fact.fact.md").read_text(encoding="utf-8")
    assert "`stale`" in (repo / "facts/stale.fact.md").read_text(encoding="utf-8")


def test_report_never_overwrites_a_hand_written_page(cli, registry, tmp_path):
    repo = init_repo(tmp_path / "proj")
    runbook = repo / "facts/docs/runbook.md"
    runbook.parent.mkdir(parents=True)
    runbook.write_text("# Runbook\n\nWritten by hand.\n", encoding="utf-8")
    git(repo, "add", "facts/docs/runbook.md")
    git(repo, "commit", "-q", "-m", "runbook")
    head = git(repo, "rev-parse", "HEAD")
    _record(registry, "ok/ttft", "docs/runbook")
    r = cli("report", "--out", str(repo), "--commit")
    assert r.exit_code == 2 and r.stderr.startswith("Error: refusing to overwrite") and "runbook.md" in r.stderr
    assert r.stderr.count("\n") == 1
    assert runbook.read_text(encoding="utf-8") == "# Runbook\n\nWritten by hand.\n"
    assert sorted(p.relative_to(repo).as_posix() for p in (repo / "facts").rglob("*")) == ["facts/docs",
                                                                                          "facts/docs/runbook.md"]
    assert git(repo, "rev-parse", "HEAD") == head


def test_report_overwrites_the_pages_it_wrote_and_an_old_site_without_manifest(cli, registry, tmp_path):
    site = tmp_path / "site"
    _record(registry, "ok/ttft")
    assert cli("report", "--out", str(site)).exit_code == 0
    manifest = site / "facts" / report.MANIFEST
    assert "ok/ttft.md" in manifest.read_text(encoding="utf-8").splitlines()
    page = site / "facts/ok/ttft.md"
    page.write_text(page.read_text(encoding="utf-8") + "an edit\n", encoding="utf-8")
    _record(registry, "ok/ttft")  # a second version: the page changes
    assert cli("report", "--out", str(site)).exit_code == 0
    assert "an edit" not in page.read_text(encoding="utf-8")
    manifest.unlink()  # a site an earlier factreg wrote: pages carry the generated-by line
    _record(registry, "ok/ttft")
    r = cli("report", "--out", str(site))
    assert r.exit_code == 0, r.stderr
    assert manifest.is_file()
