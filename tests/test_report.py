"""report: STALE.md, a page and SVG chart per fact, README.md, llms.txt; deterministic; commits only its files."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from factreg.publish import report
from factreg.registry import facts
from factreg.registry.facts import NewFact
from tests.decisions_support import add_verification, git, init_repo, seed

pytestmark = pytest.mark.usefixtures("story_clock")  # the case study, told at its own time

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def project(tmp_path: Path, registry, monkeypatch):  # type: ignore[no-untyped-def]
    repo = init_repo(tmp_path / "proj")
    (repo / ".factreg").mkdir()
    (repo / ".factreg/config.toml").write_text('[docs]\nroots = ["docs"]\n')
    (repo / "docs").mkdir()
    (repo / "docs/skill.md").write_text(
        "# gamebox\n\nDecodes at <!-- fact: gamebox/a3b/decode -->28 tok/s<!-- /fact -->.\n"
        "Gateway: <!-- fact: night/27b-gateway/ttft -->0.450 s<!-- /fact -->\n"
    )
    git(repo, "add", ".factreg/config.toml", "docs/skill.md")
    git(repo, "commit", "-q", "-m", "docs")
    monkeypatch.chdir(repo)
    seed(registry)
    # The September skill-doc number: stale by age.
    facts.record(
        registry,
        NewFact(
            id="gamebox/a3b/decode",
            metric="tg_rate",
            value=28.0,
            identity={"machine": "gamebox", "model": "35b-a3b"},
            measured_at="2026-09-10T12:00:00Z",
            warn_after="14d",
            error_after="30d",
        ),
    )
    # A fact with history: three versions and a verification.
    ident = {"machine": "gamebox", "model_type": "qwen3moe 35B.A3B", "build": "b6012"}
    for when, value, spread in (
        ("2026-09-01T00:00:00Z", 14.0, 1.0),
        ("2026-10-01T00:00:00Z", 12.5, 3.0),
        ("2026-10-26T12:00:00Z", 11.9, 7.2),
    ):
        facts.record(
            registry,
            NewFact(
                id="gamebox/a3b/tg32",
                metric="tg_rate",
                value=value,
                spread=spread,
                n=5,
                identity=ident,
                measured_at=when,
                error_after="3650d",
                warn_after="3600d",
            ),
        )
    add_verification(
        registry,
        "gamebox/a3b/tg32",
        "confirmed",
        samples=[11.0, 12.0, 13.0, 12.5, 11.5],
        verified_at="2026-10-27T00:00:00Z",
    )
    # The dead gateway: unverifiable.
    add_verification(registry, "night/27b-gateway/ttft", "auth_failed", message="HTTP 401 from the gateway")
    # A refuted fact, relied on by a decision.
    add_verification(
        registry, "night/35b-a3b/ttft", "refuted", samples=[0.44, 0.45, 0.46, 0.45, 0.47], message="warm ttft is 0.45 s"
    )
    return repo


def run_report(cli, *extra: str):  # type: ignore[no-untyped-def]
    r = cli("report", "--json", *extra)
    assert r.exit_code == 0, r.stderr
    return r.json()


def section(text: str, fact_id: str) -> str:
    start = text.index(f"## `{fact_id}`")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_stale_report_says_why_who_and_what_to_do(cli, project):
    assert (
        cli(
            "decision",
            "add",
            "Voice front end → 35B-A3B",
            "--cites",
            "night/35b-a3b/ttft,night/35b-a3b/e2e",
            "--date",
            "2026-10-26",
        ).exit_code
        == 0
    )
    run_report(cli)
    text = (project / "facts/STALE.md").read_text()
    stale = section(text, "gamebox/a3b/decode")
    # typed by hand: stale without a method, so `unverifiable`, and the step is to give it one
    assert "— unverifiable" in stale and "longer ago than error_after 30d" in stale
    assert "[docs/skill.md](../docs/skill.md) line 3" in stale
    assert "give it a method (`factreg method gamebox/a3b/decode --probe URL --body FILE`" in stale
    refuted = section(text, "night/35b-a3b/ttft")
    assert "— refuted" in refuted and "warm ttft is 0.45 s" in refuted
    assert (
        "[decision 1: Voice front end → 35B-A3B](../decisions/0001-voice-front-end-35b-a3b.md) (needs review)"
        in refuted
    )
    assert "`factreg correct night/35b-a3b/ttft --verification 3`" in refuted
    gateway = section(text, "night/27b-gateway/ttft")
    assert "— unverifiable" in gateway and "auth_failed" in gateway and "docs/skill.md" in gateway
    assert "## `gamebox/a3b/tg32`" not in text and "## `day/27b/e2e`" not in text
    assert "## Decisions needing review" in text and "night/35b-a3b/ttft is refuted" in text


def test_superseded_fact_still_cited_is_listed(cli, project, registry):
    assert cli("decision", "add", "Voice front end → 35B-A3B", "--cites", "night/35b-a3b/e2e").exit_code == 0
    facts.supersede(registry, "night/35b-a3b/e2e", "day/35b-a3b/e2e", "daytime")
    run_report(cli)
    entry = section((project / "facts/STALE.md").read_text(), "night/35b-a3b/e2e")
    assert "— superseded" in entry and "cite `day/35b-a3b/e2e` instead" in entry


def test_fact_page_and_svg_chart(cli, project):
    run_report(cli)
    page = (project / "facts/gamebox/a3b/tg32.md").read_text()
    assert "tg_rate: **value 11.9 tok/s · sd 7.2 · n=5**" in page
    assert "![history of gamebox/a3b/tg32](tg32.svg)" in page
    assert "| build | identity | b6012 |" in page
    assert "| v1 | 2026-09-01T00:00:00Z | 14.0 ± 1.0 tok/s | 5 |" in page
    assert "| confirmed |" in page
    root = ET.parse(project / "facts/gamebox/a3b/tg32.svg").getroot()
    assert root.tag == f"{SVG}svg"
    points = [e for e in root.iter() if (e.get("class") or "").startswith("point ")]
    assert [e.get("class") for e in points] == ["point version"] * 3 + ["point verification confirmed"]
    xs = [float(e.get("cx") or float(e.get("x")) + 4.5) for e in points]
    ys = [float(e.get("cy") or float(e.get("y")) + 4.5) for e in points]
    assert xs == sorted(xs) and xs[0] == 84.0 and xs[-1] == 596.0  # time runs left to right
    assert ys[0] < ys[1] < ys[2]  # 14.0 above 12.5 above 11.9 (SVG y grows downwards)
    bars = root.findall(f".//{SVG}g[@class='errorbar']")
    assert len(bars) == 4
    spans = [abs(float(g[0].get("y1")) - float(g[0].get("y2"))) for g in bars]
    assert spans[2] > spans[1] > spans[0]  # ±7.2 drawn longer than ±3.0 than ±1.0
    assert points[0].find(f"{SVG}title").text == "v1 2026-09-01 00:00: 14.0 ± 1.0 tok/s"
    heading = next(e for e in root.iter(f"{SVG}text") if e.get("class") == "heading")
    assert heading.text == "gamebox/a3b/tg32 — tg_rate (tok/s)"
    one = ET.parse(project / "facts/day/27b/e2e.svg").getroot()
    assert len([e for e in one.iter() if (e.get("class") or "").startswith("point ")]) == 1
    assert len(one.findall(f".//{SVG}circle[@class='sample']")) == 3  # its three samples, each a dot
    note = next(e for e in one.iter(f"{SVG}text") if e.get("class") == "note")
    assert note.text == "one measurement, 2026-10-26 14:05: 3 samples, each a dot"


def test_index_and_llms_txt(cli, project, registry):
    assert cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--as", "day/35b-a3b/e2e").exit_code == 0
    (project / "docs/old.md").write_text("Was <!-- fact: night/35b-a3b/e2e -->1.07 s<!-- /fact -->.\n")
    run_report(cli)
    index = (project / "facts/README.md").read_text()
    assert ("| [`gamebox/a3b/tg32`](gamebox/a3b/tg32.md) | tg_rate | value 11.9 tok/s · sd 7.2 · n=5 ⚠ high_variance "
            "| fresh, use with care |") in index
    assert "[Stale facts](STALE.md)" in index
    llms = (project / "facts/llms.txt").read_text()
    assert llms.startswith("# factreg facts\n\n> ")
    current = llms[llms.index("## Current facts") : llms.index("## Use with care")]
    care = llms[llms.index("## Use with care") : llms.index("## Do not rely on")]
    assert current == "## Current facts\n\n- none\n\n"  # every current fact here carries an integrity flag
    assert (
        "- [day/27b/e2e](day/27b/e2e.md): e2e: median 0.730 s · sd 0.216 · n=3, measured 2026-10-26, fresh; use with care "
        "because few_samples: rests on n=3 samples, too few to trust the value; high_variance: CV "
    ) in care
    assert "thinking=off\n" in care and "conditions: body_sha256=" in care
    assert "night/35b-a3b/ttft" not in care and "gamebox/a3b/decode" not in current + care
    dont = llms[llms.index("## Do not rely on") : llms.index("## Open corrections")]
    assert "night/35b-a3b/e2e" in dont and "use day/35b-a3b/e2e" in dont
    open_ = llms[llms.index("## Open corrections") : llms.index("## Optional")]
    assert "[night/35b-a3b/e2e → day/35b-a3b/e2e](corrections/" in open_
    assert "1.07 s → 2.27 ± 1.14 s" in open_ and "still cited in docs/old.md" in open_


def test_rerender_changes_no_byte_and_second_commit_makes_none(cli, project):
    (project / "notes.txt").write_text("staged by the user\n")
    git(project, "add", "notes.txt")
    (project / "README.md").write_text("# project\ndirty\n")
    first = run_report(cli, "--commit")
    assert first["commit"] and first["changed"]
    committed = git(project, "show", "--name-only", "--format=", "HEAD").split()
    assert all(p.startswith("facts/") for p in committed) and "facts/STALE.md" in committed
    assert "notes.txt" not in committed and "README.md" not in committed
    snapshot = {p: p.read_bytes() for p in (project / "facts").rglob("*") if p.is_file()}
    second = run_report(cli, "--commit")
    assert second["changed"] == [] and second["commit"] is None
    assert git(project, "rev-parse", "HEAD").strip() == first["commit"]
    assert {p: p.read_bytes() for p in (project / "facts").rglob("*") if p.is_file()} == snapshot
    status = git(project, "status", "--porcelain").splitlines()
    assert "A  notes.txt" in status and " M README.md" in status


def test_templates_override_and_out(cli, project, tmp_path):
    custom = tmp_path / "tpl"
    custom.mkdir()
    (custom / "stale.md.j2").write_text("custom {{ problems | length }} problems\n")
    out = tmp_path / "site"
    r = cli("report", "--out", str(out), "--templates", str(custom))
    assert r.exit_code == 0, r.stderr
    assert (out / "facts/STALE.md").read_text() == "custom 3 problems\n"
    assert (out / "facts/README.md").read_text().startswith("<!-- generated by factreg")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "stale.md.j2").write_text("{{ no_such_name }}\n")
    r = cli("report", "--out", str(tmp_path / "site2"), "--templates", str(bad))
    assert r.exit_code == 2 and "no_such_name" in r.stderr
    assert cli("report", "--templates", str(tmp_path / "missing")).exit_code == 2


def test_page_names_avoid_report_files():
    assert report.page_name("gamebox/a3b/tg32") == "gamebox/a3b/tg32.md"
    assert report.page_name("readme") == "readme.fact.md"
    assert report.page_name("corrections/x") == "corrections+/x.md"


# Raw HTML that Markdown renderers passing HTML through (MkDocs, many static-site generators) would run or load.
MARKDOWN_HOSTILE = ("<img src=x onerror=alert(1)>", "<script>alert('x')</script>", "<!-- hidden -->",
                    '<a href="javascript:alert(1)">x</a>', "<javascript:alert(1)>", "</td></tr></table><iframe>")


def _html_tokens(text: str) -> list[str]:
    """The raw HTML a CommonMark renderer with tables (GitHub's dialect) finds in `text`, factreg's own markers
    and generated-by comments aside."""
    from markdown_it import MarkdownIt

    found = []
    stack = list(MarkdownIt("commonmark").enable("table").parse(text))
    while stack:
        token = stack.pop()
        stack.extend(token.children or [])
        if token.type in ("html_inline", "html_block") and not token.content.startswith(
                ("<!-- generated by factreg", "<!-- factreg ", "<!-- fact:", "<!-- /fact -->")):
            found.append(token.content)
    return found


def test_registry_text_is_never_raw_html_in_the_markdown_report(cli, tmp_path, monkeypatch):
    """Registry text (a model, a subject, a note, a unit, a condition, a decision title and context, a correction
    cause) lands in facts/*.md, decisions and notes as text: a CommonMark renderer finds no raw HTML in any file
    (before: every payload was raw HTML in a table cell or heading), and the rendered text still shows it as
    written, as GitHub did."""
    from markdown_it import MarkdownIt

    from tests.site_support import build_registry

    repo = init_repo(tmp_path / "proj")
    (repo / ".factreg").mkdir()
    monkeypatch.chdir(repo)
    build_registry(cli, tmp_path)  # the site's hostile fact, decision and correction (tests/site_support.py)
    text = " ".join(MARKDOWN_HOSTILE)
    r = cli("record", "md/hostile/ttft", "-m", "ttft", "--samples", "0.4,0.5,0.6", "-c", f"model={text}",
            "-c", "machine=m", "--subject", text, "--note", text, "--measured-at", "2026-11-01")
    assert r.exit_code == 0, r.stderr
    r = cli("decision", "add", text, "--cites", "md/hostile/ttft", "--context", text, "--date", "2026-11-02")
    assert r.exit_code == 0, r.stderr
    r = cli("report")
    assert r.exit_code == 0, r.stderr
    written = sorted(p for p in repo.rglob("*.md") if ".git" not in p.parts)
    assert len(written) >= 8
    for path in written:
        content = path.read_text(encoding="utf-8")
        assert _html_tokens(content) == [], (path.relative_to(repo), _html_tokens(content))
    page = next(p for p in written if p.name == "ttft.md" and p.parent.name == "hostile" and "md" in p.parts)
    shown = MarkdownIt("commonmark").enable("table").render(page.read_text(encoding="utf-8"))
    from html import unescape

    for bad in MARKDOWN_HOSTILE:
        assert bad in unescape(shown), bad  # shown as text, as written


def test_a_citing_document_whose_name_is_not_utf8_is_named_and_linked(cli, tmp_path, monkeypatch):
    """`report`, `report --html` and `correct` over a document named with a byte that is not UTF-8 (found while
    trying a hostile `[docs] roots`): each exited 70 (`UnicodeEncodeError … surrogates not allowed`) when writing a
    page that lists it; now the name is shown as `bad\\xff.md` and linked as `bad%FF.md`, and the document is
    synced like any other."""
    import os

    repo = tmp_path / "proj"
    (repo / ".factreg").mkdir(parents=True)
    (repo / "docs").mkdir()
    monkeypatch.chdir(repo)
    for fid, value in (("a/b", "0.5"), ("a/c", "0.6")):
        assert cli("record", fid, "-m", "ttft", "--value", value, "-c", "model=m").exit_code == 0
    odd = os.fsdecode(bytes(repo / "docs") + b"/bad\xff.md")
    with open(odd, "w", encoding="utf-8") as fh:
        fh.write("TTFT is <!-- fact: a/b -->0.500 s<!-- /fact -->.\n")
    r = cli("report")
    assert r.exit_code == 0, r.stderr
    page = (repo / "facts/a/b.md").read_text(encoding="utf-8")
    assert "- [docs/bad\\xff.md](../../docs/bad%FF.md) line 1: 0.500 s" in page
    r = cli("report", "--html")
    assert r.exit_code == 0, r.stderr
    assert "docs/bad\\xff.md" in (repo / "site/a/b.html").read_text(encoding="utf-8")
    r = cli("correct", "a/b", "--by", "a/c")
    assert r.exit_code == 0, r.stderr
    (note,) = (repo / "facts/corrections").glob("*.md")
    assert "(../../docs/bad%FF.md)" in note.read_text(encoding="utf-8")
    with open(odd, encoding="utf-8") as fh:
        assert fh.read() == "TTFT is <!-- fact: a/b -->0.600 s<!-- /fact -->.\n"  # the same id, a/c's value
