"""The headline names its estimators — `median 0.730 s · sd 0.216 · n=3` — in `show`, `list`, `status`, the reports
and the HTML pages; citation markers keep the format their author chose."""

from __future__ import annotations

from pathlib import Path

import pytest

from factreg.registry import display

HEADLINE = "median 0.730 s · sd 0.216 · n=3"


@pytest.fixture
def readme_fact(cli):  # type: ignore[no-untyped-def]
    """The README's worked example."""
    r = cli("record", "daytime/27b/e2e", "--metric", "e2e", "--samples", "0.43,0.73,0.85", "--cond", "model=27B",
            "--cond", "endpoint=http://remote:8080/v1", "--cond", "warm=true")
    assert r.exit_code == 0, r.stderr
    return "daytime/27b/e2e"


def test_show_list_and_status_name_the_estimators(cli, readme_fact) -> None:
    show = cli("show", readme_fact).stdout.splitlines()
    assert show[0] == f"{readme_fact}  v1  e2e: {HEADLINE}"
    assert "±" not in "\n".join(show)
    assert show[1].startswith("  mean 0.670 · 95% interval of the mean 0.133 … 1.21 · cv 32%")
    assert HEADLINE in cli("list").stdout
    assert HEADLINE in cli("status").stdout
    assert HEADLINE in cli("history", readme_fact).stdout


def test_estimators_follow_what_the_value_is(cli) -> None:
    cli("record", "a/typed", "--metric", "tg_rate", "--value", "28", "--spread", "7.2", "--n", "5")
    cli("record", "a/bare", "--metric", "tg_rate", "--value", "28")
    assert cli("status").stdout.count("value 28.0 tok/s · sd 7.2 · n=5") == 1
    assert "value 28.0 tok/s · n=?" in cli("list").stdout
    assert display.headline({"metric": "ttft_p90", "value": 0.5, "n": 40, "unit": "s"}) == "p90 0.500 s · n=40"
    mean = {"metric": "tg_rate", "value": 11.9, "spread": 7.2, "n": 5, "unit": "tok/s",
            "stats": {"median": 10.0, "mean": 11.9}}
    assert display.headline(mean) == "mean 11.9 tok/s · sd 7.2 · n=5"


def test_reports_and_pages_use_the_headline_and_markers_keep_their_format(cli, readme_fact, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(f"Plain <!-- fact: {readme_fact} -->?<!-- /fact -->, chosen "
                               f'<!-- fact: {readme_fact} format="{{median:.2f}} s" -->?<!-- /fact -->.\n',
                               encoding="utf-8")
    assert cli("docs", "sync", str(docs)).exit_code == 0
    assert (docs / "a.md").read_text(encoding="utf-8") == (
        f"Plain <!-- fact: {readme_fact} -->0.730 ± 0.216 s<!-- /fact -->, chosen "
        f'<!-- fact: {readme_fact} format="{{median:.2f}} s" -->0.73 s<!-- /fact -->.\n')
    out = tmp_path / "out"
    assert cli("report", "--out", str(out)).exit_code == 0
    page = (out / "facts" / f"{readme_fact}.md").read_text(encoding="utf-8")
    assert f"e2e: **{HEADLINE}**" in page and f"| value | {HEADLINE} |" in page
    assert HEADLINE in (out / "facts/README.md").read_text(encoding="utf-8")
    assert f"e2e: {HEADLINE}, measured" in (out / "facts/llms.txt").read_text(encoding="utf-8")
    site = tmp_path / "site"
    assert cli("report", "--html", "--out", str(site)).exit_code == 0
    assert HEADLINE in (site / "index.html").read_text(encoding="utf-8")
