"""Review-time checks: `--changed-since REF` judges only the change, `--format github|sarif`, `docs coverage`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from factreg.cli import formats
from factreg.docs import changed
from factreg.docs import markers as mk
from factreg.registry import facts
from tests.docs_support import record, verify
from tests.gates_support import WORKFLOW_COMMAND, git, init_repo, sarif_schema_path, unescape, validate_sarif


def cite(registry, fact_id: str) -> str:
    return f"<!-- fact: {fact_id} -->{mk.render(facts.get(registry, fact_id))}<!-- /fact -->"


@pytest.fixture
def pr_repo(registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """main: documents with old debt (an unsourced claim, a citation of a refuted fact); branch `feature`: one more
    unsourced claim (committed), one more citation of the refuted fact (staged), a renamed file (unchanged)."""
    record(registry, "gamebox/a3b/tg32", 28.0)
    record(registry, "gamebox/a3b/pp512", 560.0, metric="pp_rate")
    verify(registry, "gamebox/a3b/pp512", "refuted", 180.0, 5.0, "pp512 now 180 tok/s")
    repo = tmp_path / "repo"
    init_repo(repo)
    docs = repo / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(
        "# Guide\n\nThe old box decoded at 12 tok/s.\n\n"
        f"Decoding runs at {cite(registry, 'gamebox/a3b/tg32')} here.\n\n"
        f"Prefill was {cite(registry, 'gamebox/a3b/pp512')} once.\n",
        encoding="utf-8",
    )
    (docs / "old.md").write_text("# Old\n\nA request took 900 ms back then.\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs")
    git(repo, "checkout", "-q", "-b", "feature")
    text = (docs / "guide.md").read_text(encoding="utf-8")
    (docs / "guide.md").write_text(text.replace("# Guide\n", "# Guide\n\nPrefill takes 450 ms per prompt.\n"),
                                   encoding="utf-8")
    git(repo, "mv", "docs/old.md", "docs/older.md")
    git(repo, "commit", "-q", "-am", "a claim")
    (docs / "new.md").write_text(f"# New\n\nPrefill runs at {cite(registry, 'gamebox/a3b/pp512')}.\n",
                                 encoding="utf-8")
    git(repo, "add", "docs/new.md")
    monkeypatch.chdir(repo)
    return repo


def test_changed_since_fails_with_exactly_the_new_claim_and_citation(pr_repo: Path, cli) -> None:
    lint = cli("docs", "lint", "--changed-since", "main", "--json", "docs")
    assert lint.exit_code == 1, lint.stderr
    assert [(f["path"], f["line"], f["text"]) for f in lint.json()] == [("docs/guide.md", 3, "450 ms")]
    assert "2 existing unsourced claim(s) on lines unchanged since main (debt, not judged)" not in lint.stderr
    assert "1 existing unsourced claim(s) on lines unchanged since main" in lint.stderr  # 12 tok/s in guide.md

    check = cli("docs", "check", "--changed-since", "main", "--json", "docs")
    assert check.exit_code == 1, check.stderr
    got = check.json()
    assert [(p["path"], p["line"], p["kind"], p["fact_id"]) for p in got["problems"]] == [
        ("docs/new.md", 3, "refuted", "gamebox/a3b/pp512")]
    assert got["existing_debt"] == 1  # the old citation of the refuted fact in guide.md
    assert "1 existing problem(s) on lines unchanged since main (debt, not judged)" in check.stderr

    # the debt is real: the whole check fails on it too
    whole = cli("docs", "lint", "--json", "docs")
    assert sorted(f["text"] for f in whole.json()) == ["12 tok/s", "450 ms", "900 ms"]
    assert len(cli("docs", "check", "--json", "docs").json()["problems"]) == 2


def test_changed_since_passes_when_the_change_is_clean(pr_repo: Path, cli, registry) -> None:
    git(pr_repo, "rm", "-q", "--cached", "docs/new.md")
    (pr_repo / "docs" / "new.md").unlink()
    text = (pr_repo / "docs" / "guide.md").read_text(encoding="utf-8")
    (pr_repo / "docs" / "guide.md").write_text(
        text.replace("Prefill takes 450 ms per prompt.", f"Decoding: {cite(registry, 'gamebox/a3b/tg32')}."),
        encoding="utf-8")
    assert cli("docs", "lint", "--changed-since", "main", "docs").exit_code == 0
    run = cli("docs", "check", "--changed-since", "main", "docs")
    assert run.exit_code == 0, run.stdout
    assert "1 existing problem(s)" in run.stderr


def test_untracked_and_renamed_files(pr_repo: Path) -> None:
    (pr_repo / "docs" / "draft.md").write_text("x\ny\n", encoding="utf-8")
    got = changed.since("main")
    assert got.changed("docs/draft.md", 2) and got.changed("docs/new.md", 3)
    assert not got.changed("docs/older.md", 3)  # renamed, not edited: nothing changed in it
    assert got.changed("docs/guide.md", 3) and not got.changed("docs/guide.md", 5)
    names = [p.as_posix() for p in changed.documents([Path("docs")], got)]
    assert names == ["docs/draft.md", "docs/guide.md", "docs/new.md"]


def test_renamed_and_edited_file_judges_only_the_edit(pr_repo: Path, cli) -> None:
    older = pr_repo / "docs" / "older.md"
    older.write_text(older.read_text(encoding="utf-8") + "\nNow it takes 300 ms.\n", encoding="utf-8")
    run = cli("docs", "lint", "--changed-since", "main", "--json", "docs/older.md")
    assert [(f["line"], f["text"]) for f in run.json()] == [(5, "300 ms")]


def test_bad_ref_and_no_git_are_one_error_line(pr_repo: Path, cli, tmp_path: Path, monkeypatch) -> None:
    for ref in ("no-such-branch", "--output=/tmp/x"):
        run = cli("docs", "lint", "--changed-since", ref, "docs")
        assert run.exit_code == 2
        assert run.stderr.startswith("Error: ") and "Traceback" not in run.stderr
    outside = tmp_path / "plain"
    outside.mkdir()
    monkeypatch.chdir(outside)
    run = cli("docs", "check", "--changed-since", "main", ".")
    assert run.exit_code == 2 and run.stderr.startswith("Error: ")


def test_repository_config_runs_no_command(pr_repo: Path, cli) -> None:
    """A repository's own config can name commands git runs on diff (external diff, textconv, fsmonitor):
    `--changed-since` reads a pull request's repository, so it runs none of them."""
    witness = pr_repo.parent / "ran"
    git(pr_repo, "config", "diff.external", f"sh -c 'touch {witness}-external'")
    git(pr_repo, "config", "diff.evil.textconv", f"sh -c 'touch {witness}-textconv; cat \"$0\"'")
    git(pr_repo, "config", "core.fsmonitor", f"sh -c 'touch {witness}-fsmonitor'")
    (pr_repo / ".gitattributes").write_text("*.md diff=evil\n", encoding="utf-8")
    run = cli("docs", "lint", "--changed-since", "main", "--json", "docs")
    assert [f["text"] for f in run.json()] == ["450 ms"]
    assert sorted(p.name for p in pr_repo.parent.glob("ran-*")) == []


def test_parse_diff_reads_hunks_and_quoted_names() -> None:
    diff = (b'diff --git "a/x\\tb.md" "b/x\\tb.md"\n--- "a/x\\tb.md"\n+++ "b/x\\tb.md"\n@@ -1 +1,2 @@\n-a\n+b\n+c\n'
            b"@@ -9,0 +11 @@\n+d\n--- a/gone.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
            b"+++ b/caf\\303\\251.md\n@@ -3,2 +3,0 @@\n")
    assert changed.parse_diff(diff) == {"x\tb.md": {1, 2, 11}, "caf\\303\\251.md": set()}


# --- formats -------------------------------------------------------------------------------------------------


def test_github_format_follows_the_workflow_command_grammar(pr_repo: Path, cli) -> None:
    odd = pr_repo / "docs" / "a,b:c%d.md"
    odd.write_text("Line one.\nIt took 5 s, then\r 7 s.\n", encoding="utf-8")
    run = cli("docs", "lint", "--format", "github", "docs")
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines and all(WORKFLOW_COMMAND.match(line) for line in lines), run.stdout
    mine = [line for line in lines if "a%2Cb%3Ac%25d.md" in line]
    assert len(mine) == 2
    props = dict(p.split("=", 1) for p in mine[0].split("::")[1].split(" ", 1)[1].split(","))
    assert unescape(props["file"]) == "docs/a,b:c%d.md" and props["line"] == "2" and props["col"] == "9"
    assert "\nfix: cite a fact" in unescape(mine[0].split("::", 2)[2])
    check = cli("docs", "check", "--format", "github", "docs")
    assert check.exit_code == 1
    assert all(WORKFLOW_COMMAND.match(line) for line in check.stdout.splitlines())
    assert "::error file=docs/guide.md,line=9,col=13,title=refuted%3A gamebox/a3b/pp512::" in check.stdout


def test_escaping_matches_githubs_rules() -> None:
    assert formats.escape_data("50% a\r\nb: c, d") == "50%25 a%0D%0Ab: c, d"
    assert formats.escape_property("50% a\r\nb: c, d") == "50%25 a%0D%0Ab%3A c%2C d"
    line = formats.github([formats.Finding("k", "m%\n", "p:,.md", 3, 4, "warning", "")]).rstrip("\n")
    assert line == "::warning file=p%3A%2C.md,line=3,col=4,title=k::m%25%0A"
    assert WORKFLOW_COMMAND.match(line)
    injected = formats.github([formats.Finding("k", "x\n::add-mask::y\r\n::error::z", "a\n::warning::b.md", 1)])
    # one line, one command: the runner reads commands only at a line's start, and the properties hold no `::`
    assert injected.count("\n") == 1 and injected.count("\r") == 0
    assert injected.startswith("::error file=a%0A%3A%3Awarning%3A%3Ab.md,line=1,title=k::x%0A::add-mask::y%0D%0A")


def check_schema(log: dict) -> None:  # type: ignore[type-arg]
    if sarif_schema_path() is not None:
        validate_sarif(log)


def test_sarif_is_valid_against_the_official_schema(pr_repo: Path, cli) -> None:
    """Validated against the schema where it is present (tests/data/SARIF-SCHEMA.md); the structure always."""
    check = cli("docs", "check", "--format", "sarif", "--changed-since", "main", "docs")
    assert check.exit_code == 1
    log = json.loads(check.stdout)
    check_schema(log)
    run = log["runs"][0]
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [("refuted", "error")]
    loc = run["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "docs/new.md" and loc["region"] == {"startLine": 3, "startColumn": 17}
    assert run["tool"]["driver"]["rules"][0]["id"] == "refuted"
    assert "factreg correct" in run["tool"]["driver"]["rules"][0]["help"]["text"]
    assert run["properties"] == {"existingDebt": 1}
    (pr_repo / "docs" / "a b#ü.md").write_text("It took 5 s.\n", encoding="utf-8")
    lint = cli("docs", "lint", "--format", "sarif", "--targets", "docs")
    log = json.loads(lint.stdout)
    check_schema(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert "docs/a%20b%23%C3%BC.md" in uris
    # every result names the lint rule that reports it, and the run describes each rule it uses
    rule_ids = {r["ruleId"] for r in log["runs"][0]["results"]}
    assert rule_ids and all(i.startswith("FR") for i in rule_ids)
    assert {r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]} == rule_ids


def test_sarif_schema_check_can_fail() -> None:
    if sarif_schema_path() is None:
        pytest.skip("the SARIF 2.1.0 schema is not in tests/data/ nor the shared folder (tests/data/SARIF-SCHEMA.md)")
    import jsonschema

    good = formats.sarif([formats.Finding("k", "m", "a.md", 1, 1)])
    validate_sarif(good)
    for bad in ({**good, "version": "2.0.0"},
                {**good, "runs": [{**good["runs"][0], "results": [{"ruleId": "k"}]}]},  # no message
                {**good, "runs": [{**good["runs"][0], "results": [
                    {**good["runs"][0]["results"][0], "level": "fatal"}]}]}):
        with pytest.raises(jsonschema.ValidationError):
            validate_sarif(bad)


def test_status_in_every_format(registry, cli) -> None:
    record(registry, "gamebox/a3b/tg32", 28.0)
    record(registry, "gamebox/a3b/pp512", 560.0, metric="pp_rate")
    verify(registry, "gamebox/a3b/pp512", "refuted", 180.0, 5.0, "pp512 now 180 tok/s")
    text = cli("status")
    assert text.exit_code == 1 and "refuted" in text.stdout
    assert cli("status", "--format", "json").json() == cli("status", "--json").json()
    gh = cli("status", "--format", "github")
    assert gh.exit_code == 1
    assert gh.stdout.splitlines() == [gh.stdout.strip()]
    assert WORKFLOW_COMMAND.match(gh.stdout.strip()) and gh.stdout.startswith("::error title=refuted%3A gamebox")
    sarif = cli("status", "--format", "sarif")
    log = json.loads(sarif.stdout)
    if sarif_schema_path() is not None:
        validate_sarif(log)
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "gamebox/a3b/pp512"
    bad = cli("status", "--json", "--format", "sarif")
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: ")
    assert cli("status", "--format", "xml").exit_code == 2


def test_verify_formats_on_nothing_to_verify(registry, cli) -> None:
    record(registry, "gamebox/a3b/tg32", 28.0)
    run = cli("verify", "--stale", "--format", "sarif")
    assert run.exit_code == 0
    log = json.loads(run.stdout)
    assert log["runs"][0]["results"] == []
    if sarif_schema_path() is not None:
        validate_sarif(log)
    assert cli("verify", "--stale", "--format", "github").stdout == ""


# --- coverage ------------------------------------------------------------------------------------------------


def test_coverage_counts_claims_citations_and_current(pr_repo: Path, cli) -> None:
    run = cli("docs", "coverage", "--json", "docs")
    assert run.exit_code == 0, run.stderr
    got = run.json()
    by_path = {f["path"]: f for f in got["files"]}
    guide = by_path["docs/guide.md"]
    assert (guide["claims"], guide["cited"], guide["cited_current"], guide["unsourced"]) == (4, 2, 1, 2)
    assert guide["share_cited_current"] == 25.0
    assert by_path["docs/new.md"]["share_cited_current"] == 0.0
    total = got["total"]
    assert (total["claims"], total["cited"], total["cited_current"], total["unsourced"]) == (6, 3, 1, 3)
    assert total["share_cited_current"] == pytest.approx(100 / 6)
    assert cli("docs", "coverage", "--fail-under", "16", "docs").exit_code == 0
    under = cli("docs", "coverage", "--fail-under", "17", "docs")
    assert under.exit_code == 1 and "17% cited and current" in under.stderr
    text = cli("docs", "coverage", "docs")
    assert "docs/guide.md" in text.stdout and "25%" in text.stdout
    assert cli("docs", "coverage", "--fail-under", "101", "docs").exit_code == 2


def test_report_shows_coverage_without_counting_its_own_pages(pr_repo: Path, cli) -> None:
    run = cli("report")
    assert run.exit_code == 0, run.stderr
    index = (pr_repo / "facts" / "README.md").read_text(encoding="utf-8")
    section = index[index.index("## Sourcing of the documents' claims"):]
    # the same counts as `docs coverage docs`: the report's fact pages (numbers everywhere) are not documents
    assert "17% of the 6 performance claim(s) in the documents cite a current (fresh or aging) fact" in section
    assert "3 cited, 1 of them current, 3 unsourced" in section
    assert "| [../docs/guide.md](../docs/guide.md) | 4 | 2 | 1 | 2 | 25% |" in section
    assert cli("report").exit_code == 0
    assert (pr_repo / "facts" / "README.md").read_text(encoding="utf-8") == index  # stable on re-render


def test_file_names_git_quotes_are_read_back(pr_repo: Path, cli) -> None:
    odd = pr_repo / "docs" / 'café\t"q".md'
    odd.write_text("# Odd\n", encoding="utf-8")
    git(pr_repo, "add", "-A")
    git(pr_repo, "commit", "-q", "-m", "odd name")
    odd.write_text("# Odd\n\nIt now takes 80 ms.\n", encoding="utf-8")  # unstaged edit of a tracked file
    run = cli("docs", "lint", "--changed-since", "main", "--json", "docs")
    assert sorted((Path(f["path"]).name, f["line"], f["text"]) for f in run.json()) == [
        ('café\t"q".md', 3, "80 ms"), ("guide.md", 3, "450 ms")]


def test_verify_results_become_findings(capsys: pytest.CaptureFixture[str]) -> None:
    from factreg.cli.verify import _emit_results

    results = [{"id": f"m/x/{v}", "verdict": v, "message": f"{v} because"} for v in
               ("confirmed", "refuted", "conditions_changed", "inconclusive", "error")]
    _emit_results("sarif", results)  # type: ignore[arg-type]
    log = json.loads(capsys.readouterr().out)
    if sarif_schema_path() is not None:
        validate_sarif(log)
    got = [(r["ruleId"], r["level"]) for r in log["runs"][0]["results"]]
    assert got == [("refuted", "error"), ("conditions_changed", "error"), ("inconclusive", "warning"),
                   ("error", "warning")]
    _emit_results("github", results)  # type: ignore[arg-type]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and all(WORKFLOW_COMMAND.match(line) for line in lines)
    assert lines[0] == "::error title=refuted%3A m/x/refuted::m/x/refuted: refuted: refuted because"


def test_a_file_name_that_is_not_utf8_is_linted_checked_and_shown_escaped(tmp_path: Path, registry, db_url) -> None:
    """One document named with a byte that is not UTF-8 beside normal ones: every format of `docs lint` and
    `docs check` reads it, reports its findings under an escaped name (`bad\\xff.md` in text, JSON and GitHub
    commands, `bad%FF.md` in SARIF URIs), says so in one line, and exits 1 as for any finding (was: exit 70 and
    nothing reported for any file). The real CLI in a subprocess, so the bytes written to stdout are checked."""
    import subprocess
    import sys

    from tests.conftest import pinned_env

    record(registry, "gamebox/a3b/tg32", 28.0)
    docs = tmp_path / "work" / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("Decode runs at 12 tok/s.\n", encoding="utf-8")
    odd = os.fsdecode(bytes(docs) + b"/bad\xff.md")
    with open(odd, "w", encoding="utf-8") as fh:
        fh.write("TTFT is 0.4 s on gamebox.\n\nDecode: <!-- fact: gamebox/a3b/tg32 -->1 tok/s<!-- /fact -->.\n")
    env = pinned_env(FACTREG_DB=db_url, FACTREG_CACHE_DIR=str(tmp_path / "cache"))

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "factreg", *args], cwd=docs.parent, env=env,
                              capture_output=True, timeout=120)

    for attempt in ("cold cache", "warm cache"):
        for fmt in formats.FORMATS:
            got = run("docs", "lint", "docs", "--format", fmt)
            assert got.returncode == 1, (attempt, fmt, got.stderr)
            out = got.stdout.decode("utf-8")  # valid UTF-8 whatever the file names
            notes = [line for line in got.stderr.decode("utf-8").splitlines() if "not UTF-8" in line]
            assert notes == ["warning: 1 file name(s) not UTF-8, read and shown with \\xNN escapes: "
                             "docs/bad\\xff.md"], (fmt, got.stderr)
            if fmt == "text":
                assert out.splitlines() == ["docs/bad\\xff.md:1:9: FR101 0.4 s (0.4 s)",
                                            "docs/good.md:1:16: FR111 12 tok/s (12 tok/s)"]
            elif fmt == "json":
                assert [(f["path"], f["text"]) for f in json.loads(out)] == [
                    ("docs/bad\\xff.md", "0.4 s"), ("docs/good.md", "12 tok/s")]
            elif fmt == "github":
                lines = out.splitlines()
                assert len(lines) == 2 and all(WORKFLOW_COMMAND.match(line) for line in lines)
                assert lines[0].startswith("::error file=docs/bad\\xff.md,line=1,col=9,")
            else:
                log = json.loads(out)
                if sarif_schema_path() is not None:
                    validate_sarif(log)
                uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                        for r in log["runs"][0]["results"]]
                assert uris == ["docs/bad%FF.md", "docs/good.md"]

        check = run("docs", "check", "docs", "--lint", "--json")
        assert check.returncode == 1, check.stderr
        got_check = json.loads(check.stdout.decode("utf-8"))
        assert [(p["path"], p["kind"]) for p in got_check["problems"]] == [("docs/bad\\xff.md", "text_differs")]
        assert [c["path"] for c in got_check["claims"]] == ["docs/bad\\xff.md", "docs/good.md"]
        text = run("docs", "check", "docs")
        assert text.returncode == 1
        assert text.stdout.decode("utf-8").startswith("docs/bad\\xff.md:3:9: gamebox/a3b/tg32: text_differs")
        sarif = run("docs", "check", "docs", "--format", "sarif")
        assert sarif.returncode == 1
        assert "docs/bad%FF.md" in sarif.stdout.decode("utf-8")
