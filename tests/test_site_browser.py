"""report --html in a real browser: Debian's chromium, headless, on the generated files through file://.

Each check loads a page with `--dump-dom` (the DOM after its scripts ran) or `--screenshot`, with every host name
unresolvable, and reads the browser's console from its log (`--enable-logging=stderr`: one `CONSOLE` line per
message — a script error, a Content-Security-Policy violation, a blocked request). A page may log nothing.

The browser is installed by `.ci/run` and the README's set-up (`apt-get install -y chromium`), never by the tests.
Missing, it is a failure in CI (`CI` set) or as root (the CI machine), and a skip elsewhere.
Screenshots are kept in the test's folder; their paths are printed (`pytest -s` shows them).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from factreg.publish import site
from factreg.registry import series
from tests.site_support import HOSTILE_FACT, SHIFTED, Page, build_registry, ok

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CONSOLE = re.compile(r":CONSOLE[:(]")


@pytest.fixture(scope="session")
def browser() -> str:
    found = next((path for path in map(shutil.which, BROWSERS) if path), None)
    if found is None:
        why = "no headless browser: install Debian's chromium (`apt-get install -y chromium`, as .ci/run does)"
        if os.environ.get("CI") or (hasattr(os, "geteuid") and os.geteuid() == 0):
            pytest.fail(why)
        pytest.skip(why)
    return found


def load(browser: str, url: str, tmp_path: Path, *flags: str) -> tuple[str, list[str]]:
    """Load `url` headless: (stdout, the console lines)."""
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp_path)
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           "--disable-extensions", "--disable-background-networking", "--disable-component-update",
           "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
           "--hide-scrollbars", "--virtual-time-budget=5000", *flags, url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout, [line for line in r.stderr.splitlines() if CONSOLE.search(line)]


def dom(browser: str, path: Path, tmp_path: Path, fragment: str = "") -> Page:
    out, console = load(browser, path.as_uri() + fragment, tmp_path, "--dump-dom")
    assert console == [], console
    return Page(out)


@pytest.fixture
def built(tmp_path: Path, cli, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    build_registry(cli, tmp_path)
    out = tmp_path / "site"
    ok(cli("report", "--html", "--out", str(out)))
    return out


def visible_rows(page: Page) -> list[str]:
    rows = [a for t, a in page.elements if t == "tr" and "data-status" in a]
    return [a["data-text"].split()[0] for a in rows if "hidden" not in a]  # type: ignore[union-attr]


@pytest.mark.slow
def test_the_console_check_sees_errors_and_blocked_requests(browser, tmp_path):
    """The check below can fail: a script error and a request the page's policy blocks both reach the log."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                    "script-src 'unsafe-inline'\"><img src=\"https://example.invalid/x.png\">"
                    "<script>console.log('fine'); missing();</script>", encoding="utf-8")
    _, console = load(browser, page.as_uri(), tmp_path, "--dump-dom")
    assert any("missing is not defined" in line for line in console), console
    assert any("Content Security Policy" in line for line in console), console


def test_the_index_filters_in_the_browser(browser, built, tmp_path):
    index = built / "index.html"
    every = ["gamebox/35b-a3b/tg32", "night/35b-a3b/ttft", "night/35b-a3b/ttft-warm", HOSTILE_FACT]
    page = dom(browser, index, tmp_path)
    (form,) = page.find("form")
    assert "hidden" not in form  # the script ran: the filter is shown
    assert visible_rows(page) == every
    assert "4 of 4 facts shown" in page.text
    # The filter's state is in the address, so a filtered view can be linked to (and tested here).
    assert visible_rows(dom(browser, index, tmp_path, "#status=shifted")) == [SHIFTED]
    page = dom(browser, index, tmp_path, "#q=warm")
    assert visible_rows(page) == ["night/35b-a3b/ttft-warm"] and "1 of 4 facts shown" in page.text
    assert visible_rows(dom(browser, index, tmp_path, "#status=problems&q=gamebox")) == [SHIFTED]


def test_a_fact_page_draws_its_history_in_the_browser(browser, built, tmp_path, registry):
    page = dom(browser, built / site.html_name(SHIFTED), tmp_path)
    assert len(page.find("svg")) == 1
    assert len(page.find("circle", "point")) == len(series.of(registry, SHIFTED).points) == 15
    assert len(page.find("line", "change")) == 1
    hostile = dom(browser, built / site.html_name(HOSTILE_FACT), tmp_path)
    assert hostile.find("img") == [] and hostile.raw["script"] == []


def test_screenshots(browser, built, tmp_path):
    shots = tmp_path / "screenshots"
    shots.mkdir()
    for name, rel, fragment in (("index", "index.html", ""), ("filtered", "index.html", "#q=night"),
                                ("fact", site.html_name(SHIFTED), "")):
        png = shots / f"site-{name}.png"
        _, console = load(browser, (built / rel).as_uri() + fragment, tmp_path, f"--screenshot={png}",
                          "--window-size=1100,900")
        assert console == [], console
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        print(f"screenshot: {png}")
