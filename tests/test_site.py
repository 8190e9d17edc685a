"""report --html: a static site of the registry — deterministic, escaped, self-contained (nothing fetched from
elsewhere), written under a manifest, with the change points of a fact's history on its chart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from factreg.publish import render as rendering
from factreg.publish import site
from factreg.registry import series
from tests.conftest import TEST_NOW
from tests.decisions_support import git, init_repo
from tests.site_support import (
    HOSTILE_FACT,
    HOSTILE_TEXTS,
    IMG,
    SCRIPT,
    SECRET,
    SHIFTED,
    UNIT,
    URL,
    Page,
    build_registry,
    ok,
)

FACTS = (SHIFTED, "night/35b-a3b/ttft", "night/35b-a3b/ttft-warm", HOSTILE_FACT)


@pytest.fixture
def project(tmp_path: Path, cli, monkeypatch):  # type: ignore[no-untyped-def]
    repo = init_repo(tmp_path / "proj")
    (repo / ".factreg").mkdir()
    (repo / ".factreg/config.toml").write_text('[docs]\nroots = ["docs"]\n')
    (repo / "docs").mkdir()
    (repo / "docs/skill.md").write_text(f"# gamebox\n\nDecodes at <!-- fact: {SHIFTED} -->28.2 tok/s<!-- /fact -->.\n")
    git(repo, "add", ".factreg/config.toml", "docs/skill.md")
    git(repo, "commit", "-q", "-m", "docs")
    monkeypatch.chdir(repo)
    build_registry(cli, tmp_path)
    return repo


def render(cli, out: Path, *extra: str) -> dict:  # type: ignore[no-untyped-def]
    return ok(cli("report", "--html", "--out", str(out), "--json", *extra)).json()


def files_of(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def html_of(out: Path) -> dict[str, str]:
    return {k: v.decode("utf-8") for k, v in files_of(out).items() if k.endswith(".html")}


def test_the_site_is_an_index_and_a_page_per_fact_under_a_manifest(cli, project, tmp_path):
    out = tmp_path / "site"
    result = render(cli, out)
    pages = {site.html_name(f) for f in FACTS}
    assert set(files_of(out)) == {"index.html", "factreg-manifest.txt", *pages}
    assert len(result["written"]) == len(result["changed"]) == len(pages) + 2
    listed = (out / "factreg-manifest.txt").read_text().splitlines()[1:]
    assert listed == sorted(["index.html", *pages])
    index = Page(html_of(out)["index.html"])
    links = {a["href"] for a in index.find("a")}
    assert pages <= links  # every fact's page is linked from the index
    rows = [a for t, a in index.elements if t == "tr" and "data-status" in a]
    assert [r["data-status"] for r in rows] == ["shifted", "superseded", "fresh", "fresh"]
    # Without JavaScript: the whole table, and no filter controls that would do nothing.
    assert all("hidden" not in r for r in rows)
    (form,) = index.find("form")
    assert "hidden" in form
    # A nested page links back to the index and to the other pages relative to itself.
    page = Page(html_of(out)[site.html_name("night/35b-a3b/ttft")])
    hrefs = {a["href"] for a in page.find("a")}
    assert "../../index.html" in hrefs and "ttft-warm.html" in hrefs


def test_the_same_registry_renders_the_same_bytes(cli, project, tmp_path, monkeypatch):
    first, second = tmp_path / "one", tmp_path / "two"
    render(cli, first)
    monkeypatch.setenv("FACTREG_NOW", TEST_NOW.replace("T12:", "T17:"))  # later the same day
    render(cli, second)
    assert files_of(first) == files_of(second)
    assert render(cli, first)["changed"] == []
    # The one date on the pages is the day the statuses are for.
    assert f"statuses as of {TEST_NOW[:10]}" in html_of(first)["index.html"]
    assert render(cli, tmp_path / "three", "--as-of", "2026-12-24")["changed"]
    assert "statuses as of 2026-12-24" in html_of(tmp_path / "three")["index.html"]


def test_the_chart_shows_the_case_study_drop_and_its_change_point(cli, project, tmp_path, registry):
    out = tmp_path / "site"
    render(cli, out)
    text = html_of(out)[site.html_name(SHIFTED)]
    page = Page(text)
    s = series.of(registry, SHIFTED)
    points = page.find("circle", "point")
    assert len(points) == len(s.points) == 15
    assert len(page.find("circle", "version")) == 11 and len(page.find("circle", "verification")) == 4
    assert len(page.find("circle", "sample")) == 15 * 3
    assert len(page.find("circle", "current")) == 1
    (change,) = page.find("line", "change")
    xs = [float(p["cx"] or 0) for p in points]
    assert xs == sorted(xs)
    assert xs[10] < float(change["x1"] or 0) < xs[11]  # between v11 and the first verification on the new build
    ys = [float(p["cy"] or 0) for p in points]
    assert max(ys[:11]) < min(ys[11:])  # the drop: lower values are further down
    assert len(page.find("line", "level")) == len(page.find("rect", "band")) == 2
    assert "−57.1%" in page.text
    body = " ".join(page.text)
    assert "build_commit" in body and "8cf427ff → 1a2b3c4" in body
    index = html_of(out)["index.html"]
    assert "dropped 57.1% on " in index and 'data-status="shifted"' in index


def test_every_value_is_escaped_and_no_secret_is_rendered(cli, project, tmp_path):
    out = tmp_path / "site"
    render(cli, out)
    pages = html_of(out)
    hostile = pages[site.html_name(HOSTILE_FACT)]
    for name, text in pages.items():
        for bad in HOSTILE_TEXTS:
            assert bad not in text, (name, bad)
        assert SECRET not in text, name
        page = Page(text)
        assert page.find("img") == []
        assert len(page.raw["style"]) == 1
        assert len(page.raw["script"]) == (1 if name == "index.html" else 0)
        assert all("onerror" not in attrs for _, attrs in page.elements)
    # The hostile text is there, as text.
    body = " ".join(Page(hostile).text)
    assert SCRIPT in body and IMG.strip('">') in body and URL in body and UNIT in body
    assert "&lt;script&gt;alert(" in hostile
    assert f"Voice front end {SCRIPT}" in " ".join(Page(pages["index.html"]).text)


def test_no_file_asks_for_anything_from_elsewhere(cli, project, tmp_path):
    out = tmp_path / "site"
    render(cli, out)
    for name, text in html_of(out).items():
        page = Page(text)
        (csp,) = [a for t, a in page.elements if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
        assert (csp["content"] or "").startswith("default-src 'none';")
        for tag, attrs in page.elements:
            for key in ("src", "href", "action", "srcset", "data", "xlink:href", "poster", "background"):
                value = attrs.get(key)
                if value is not None:
                    assert ":" not in value and not value.startswith("//"), (name, tag, key, value)
        for style in page.raw["style"]:
            assert "url(" not in style and "@import" not in style
        for script in page.raw["script"]:
            assert not re.search(r"https?:|fetch\(|XMLHttpRequest|import\(|\.src\b", script)
        # An address appears only where the registry's own text holds one, as text.
        found = re.findall(r"https?://", text)
        assert len(found) == sum(len(re.findall(r"https?://", t)) for t in page.text), name
    assert "evil.example" in html_of(out)[site.html_name(HOSTILE_FACT)]


def test_a_file_factreg_did_not_write_is_never_overwritten(cli, project, tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("<p>my own page</p>\n")
    r = cli("report", "--html", "--out", str(out))
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: refusing to overwrite") and "Traceback" not in r.stderr
    assert (out / "index.html").read_text() == "<p>my own page</p>\n"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]


def test_the_site_is_committed_with_commit(cli, project):
    r = ok(cli("report", "--html", "--commit"))  # default folder: site/ under the project root
    assert "committed" in r.stderr
    tracked = git(project, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(tracked) == sorted(["site/index.html", "site/factreg-manifest.txt",
                                      *(f"site/{site.html_name(f)}" for f in FACTS)])
    assert "nothing to commit" in ok(cli("report", "--html", "--commit")).stderr


@pytest.mark.parametrize(
    "ids",
    [
        ["a", "a.html", "a.html/x", "a.md/x", "a.md", "a/x"],
        ["index", "index.fact", "index.fact.fact", "stale", "readme", "llms"],
        ["x.html.html/y", "x.html", "x", "corrections/x", "corrections"],
    ],
)
def test_every_fact_has_its_own_page_name(ids):
    names = [site.html_name(i) for i in ids]
    assert len(set(names)) == len(names)
    assert "index.html" not in names and all(n.endswith(".html") for n in names)
    folders = {"/".join(n.split("/")[:k]) for n in names for k in range(1, n.count("/") + 1)}
    assert not folders & set(names)  # no page is where another page's folder is


def test_a_decisions_drivers_are_shown_when_it_has_them():
    decision = {"number": 3, "title": "Use <b>A</b>", "status": "accepted", "date": "2026-10-26",
                "decision_makers": [], "context": None, "outcome": None, "cites": [], "review_reasons": [],
                "reverted": None, "superseded_by": None, "supersedes": [], "path": "decisions/0003.md",
                "drivers": ["latency <script>", {"fact": "a/b", "weight": "high"}]}
    text = rendering.render("site-decision.html.j2", {"d": site._decision(decision, {}, ""), "decision_base": ""})
    assert "latency &lt;script&gt;" in text and "fact: a/b; weight: high" in text
    del decision["drivers"]
    text = rendering.render("site-decision.html.j2", {"d": site._decision(decision, {}, ""), "decision_base": ""})
    assert "Drivers" not in text and "Use &lt;b&gt;A&lt;/b&gt;" in text
