"""render: one jinja2 environment — shipped templates, overrides, StrictUndefined, text as data, no clock."""

from __future__ import annotations

import pytest

from factreg import secrets
from factreg.errors import ConfigError
from factreg.publish import render


def test_shipped_templates_are_found_and_packaged():
    folder = render.default_dir()
    names = sorted(p.name for p in folder.glob("*.j2"))
    assert names == [
        "chart.svg.j2",
        "correction.ko.md.j2",
        "correction.md.j2",
        "decision.ko.md.j2",
        "decision.md.j2",
        "fact.md.j2",
        "index.md.j2",
        "llms.txt.j2",
        "retraction.ko.md.j2",
        "retraction.md.j2",
        "site-base.html.j2",
        "site-chart.html.j2",
        "site-corrections.html.j2",
        "site-decision.html.j2",
        "site-fact.html.j2",
        "site-index.html.j2",
        "site.css.j2",
        "site.js.j2",
        "stale.ko.md.j2",
        "stale.md.j2",
    ]
    assert (folder / "__init__.py").is_file()


def test_html_templates_escape_markdown_holds_no_tag_and_the_others_do_not(tmp_path):
    (tmp_path / "t.html.j2").write_text("{{ x }}\n")
    (tmp_path / "t.md.j2").write_text("{{ x }}\n")
    (tmp_path / "t.txt.j2").write_text("{{ x }}\n")
    assert render.render("t.html.j2", {"x": "<b>&"}, tmp_path) == "&lt;b&gt;&amp;\n"
    assert render.render("t.md.j2", {"x": "<b>& a < 1"}, tmp_path) == "&lt;b>& a < 1\n"  # GitHub shows the same
    assert render.render("t.txt.j2", {"x": "<b>&"}, tmp_path) == "<b>&\n"


def test_strict_undefined_is_a_one_line_error(tmp_path):
    (tmp_path / "t.j2").write_text("{{ missing.value }}\n")
    with pytest.raises(ConfigError, match="template 't.j2': 'missing' is undefined"):
        render.render("t.j2", {}, tmp_path)
    (tmp_path / "s.j2").write_text("{% if %}\n")
    with pytest.raises(ConfigError, match="line 1"):
        render.render("s.j2", {}, tmp_path)
    with pytest.raises(ConfigError, match="not found"):
        render.render("nope.j2", {}, tmp_path)


def test_override_falls_back_file_by_file(tmp_path):
    (tmp_path / "stale.md.j2").write_text("mine\n")
    assert render.render("stale.md.j2", {}, tmp_path) == "mine\n"
    text = render.render("llms.txt.j2", {"pages": [], "corrections": []}, tmp_path)
    assert text.startswith("# factreg facts")


def test_document_text_is_data_never_source(tmp_path):
    (tmp_path / "t.j2").write_text("{{ text }}|{{ text | cell }}\n")
    evil = "{{ 7 * 7 }} {% for x in range(3) %}x{% endfor %} a|b"
    out = render.render("t.j2", {"text": evil}, tmp_path)
    assert out == evil + "|" + evil.replace("|", "\\|") + "\n"


def test_trailing_newline_and_determinism(tmp_path):
    (tmp_path / "t.j2").write_text("{{ n | num }} {{ v | value(s, 'tok/s') }}\n")
    first = render.render("t.j2", {"n": 11.94, "v": 11.9, "s": 7.2}, tmp_path)
    assert first == "11.9 11.9 ± 7.2 tok/s\n"
    assert render.render("t.j2", {"n": 11.94, "v": 11.9, "s": 7.2}, tmp_path) == first


def test_filters_redact_and_escape():
    redact = render.environment().filters["redact"]
    assert redact is secrets.redact  # one redaction rule, not a copy
    assert redact("Authorization: Bearer abcdefghijklmnop") == "Authorization: Bearer ***"
    assert redact("Bearer ${API_KEY}") == "Bearer ${API_KEY}"
    assert render.xml('a<b & "c"') == "a&lt;b &amp; &quot;c&quot;"
    assert render.yaml_str('say "hi"\n') == '"say \\"hi\\"\\n"'
    assert render.md_cell("a|b\nc") == "a\\|b c"


def test_no_clock_in_templates():
    for path in render.default_dir().glob("*.j2"):
        text = path.read_text()
        assert "utcnow" not in text and "datetime" not in text


def test_missing_override_folder():
    with pytest.raises(ConfigError, match="no such folder"):
        render.environment("/nonexistent/templates")


def test_fixed_filter_caps_its_decimals(tmp_path):
    (tmp_path / "f.j2").write_text("{{ 1.5 | fixed(2) }} {{ 1.5 | fixed(20) }}\n")
    assert render.render("f.j2", {}, tmp_path) == f"1.50 {1.5:.20f}\n"
    (tmp_path / "g.j2").write_text("{{ 1.5 | fixed(100000) }}\n")  # formatted anyway, 100 KB: small, but over
    with pytest.raises(ConfigError, match="from 0 to 20"):
        render.render("g.j2", {}, tmp_path)


def test_front_matter_and_json_hold_no_tag_and_read_back_the_same(tmp_path):
    import json

    for text in ("<script>x</script>", "a < b", "<!-- c -->", "ok"):
        scalar = render.yaml_str(text)
        assert "<s" not in scalar and "<!" not in scalar and json.loads(scalar) == text
    (tmp_path / "t.md.j2").write_text("{{ x | json }}\n| `{{ x | json | cell }}` |\n")
    first, cell = render.render("t.md.j2", {"x": {"a": "<img src=x>"}}, tmp_path).splitlines()
    assert "<img" not in first + cell and json.loads(first) == {"a": "<img src=x>"}
