"""Rendering: the one jinja2 environment for every report, note and decision file factreg writes.

Templates come from the top-level `templates/` folder (shipped as the package `factreg.templates`); a
`--templates DIR` folder overrides them file by file. Undefined names are errors (StrictUndefined), output
keeps its trailing newline, and nothing time-dependent is added: the same data renders the same bytes.
Document text is always passed as data, never compiled as template source. Every rendered text passes through
`secrets.redact` (the filters redact each value, and the whole output is redacted once more). HTML templates
(`*.html.j2`, the site of `report --html`) escape every value they print (jinja2 autoescape); Markdown templates
(`*.md.j2`) print every value without raw HTML (`md_text`: a `<` that could open a tag as `&lt;`, JSON escapes in
JSON and front matter), so MkDocs and other renderers that pass HTML through show what GitHub shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg import fmt, secrets, terminal
from factreg.errors import ConfigError
from factreg.measure import machinestate

if TYPE_CHECKING:
    import jinja2

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def default_dir() -> Path:
    """The folder of the shipped templates."""
    import factreg.templates

    return Path(factreg.templates.__file__).resolve().parent


class MdSafe(str):
    """Markdown output that is already safe as it is: escaped text, a YAML or JSON scalar of the front matter."""


class JsonText(str):
    """JSON text (the `json` filter): in Markdown, a `<` is written as the JSON escape `\\u003c` (the same data)."""


# A `<` that could open raw HTML in Markdown (a tag, a closing tag, a comment, `<!DOCTYPE`, `<?…?>`) or an
# autolink: one followed by a letter, `/`, `!` or `?` — or at the end of a value, where the template's next text
# could follow it. Any other `<` (`ID < 1.0 s`) is shown as it is by every renderer, and stays readable.
_HTML_OPENER = re.compile(r"<(?=[A-Za-z/!?]|$)")


def md_text(text: Any) -> MdSafe:
    """Registry text as Markdown that holds no raw HTML (GitHub, MkDocs and renderers that pass HTML through show
    the same characters): a `<` that could open a tag becomes `&lt;`. Redacted."""
    if isinstance(text, MdSafe):
        return text
    return MdSafe(_HTML_OPENER.sub("&lt;", secrets.redact(text)))


def _json_safe(text: str) -> str:
    """JSON (or a YAML double-quoted scalar) with every `<` that could open HTML written as `\\u003c`."""
    return _HTML_OPENER.sub("\\\\u003c", text)


def md_cell(text: Any) -> MdSafe:
    """Text that stays inside one Markdown table cell, with no raw HTML."""
    if text is None:
        return MdSafe("—")
    escaped = _json_safe(str(text)) if isinstance(text, JsonText) else md_text(text)
    return MdSafe(escaped.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " "))


def md_inline(text: Any) -> MdSafe:
    """Free text on one line (newlines folded), with no raw HTML."""
    return md_text(" ".join(secrets.redact("" if text is None else text).split()))


def yaml_str(text: Any) -> MdSafe:
    """A YAML scalar for front matter: a JSON string, which YAML reads back unchanged (a `<` that could open HTML
    as `\\u003c`: a renderer that shows front matter as text shows no tag)."""
    return MdSafe(_json_safe(json.dumps(secrets.redact("" if text is None else text), ensure_ascii=False)))


def yaml_date(text: Any) -> MdSafe:
    """A date for front matter: `2026-10-26` as it is (YAML reads a date), anything else as a quoted string —
    a value edited into the database cannot add front-matter lines."""
    if isinstance(text, str) and _DATE.fullmatch(text):
        return MdSafe(text)
    return yaml_str(text)


def xml(text: Any) -> str:
    """Text escaped for XML (SVG) content and attribute values."""
    return (
        str(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def _num(x: float | None, digits: int = 3) -> str:
    return fmt.num(x, digits)


def _value(v: float | None, spread: float | None = None, unit: str | None = None, digits: int = 3) -> str:
    return fmt.value(v, spread, unit, digits)


def _interval(ci: Any, unit: str | None = None) -> str:
    """`[0.41, 1.26] s`, or `—` when there is no interval."""
    if not ci or ci[0] is None:
        return "—"
    text = f"[{fmt.num(ci[0])}, {fmt.num(ci[1])}]"
    if unit and unit != "bool":
        text += f" {unit}" if unit not in ("×", "%") else unit
    return text


def _json(x: Any) -> JsonText:
    """A JSON (and YAML flow) scalar, list or mapping; every string in it is redacted."""
    return JsonText(json.dumps(secrets.redact_data(x), ensure_ascii=False, sort_keys=True))


def _markdown_template(name: str | None) -> bool:
    return bool(name) and str(name).endswith((".md.j2", ".md"))


def _finalize_for(context: Any, value: Any) -> Any:
    """What a Markdown template prints for `{{ value }}`: registry text without raw HTML (`md_text`), JSON with
    `\\u003c`, what a Markdown filter made as it is; other templates print values as they are (HTML ones are
    autoescaped)."""
    if not isinstance(value, str) or isinstance(value, MdSafe) or not _markdown_template(context.name):
        return value
    return MdSafe(_json_safe(value)) if isinstance(value, JsonText) else md_text(value)


# A template's `fixed` filter, like a citation marker's format (docs.markers.MAX_PRECISION), takes at most 20
# decimals: a larger count is a template error, never a gigabyte of zeros.
MAX_DECIMALS = 20


def _fixed(x: float, decimals: int = 1) -> str:
    """A coordinate with fixed decimals (SVG geometry)."""
    if not isinstance(decimals, int) or not 0 <= decimals <= MAX_DECIMALS:
        raise ConfigError(f"fixed: decimals must be a whole number from 0 to {MAX_DECIMALS}, got {decimals!r}")
    return f"{x:.{decimals}f}"


def _autoescape(name: str | None) -> bool:
    """HTML templates (`*.html.j2`) escape every value they print; the Markdown and SVG templates do not."""
    return bool(name) and str(name).endswith((".html.j2", ".html"))


@lru_cache(maxsize=8)
def _environment(override: str | None) -> jinja2.Environment:
    import jinja2

    loaders: list[jinja2.BaseLoader] = []
    if override is not None:
        loaders.append(jinja2.FileSystemLoader(override, encoding="utf-8"))
    loaders.append(jinja2.FileSystemLoader(str(default_dir()), encoding="utf-8"))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=_autoescape,  # HTML pages; the `xml` filter escapes SVG text
        finalize=jinja2.pass_context(_finalize_for),  # Markdown: no raw HTML from the registry
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        num=_num,
        value=_value,
        interval=_interval,
        cell=md_cell,
        inline=md_inline,
        yaml=yaml_str,
        yaml_date=yaml_date,
        xml=xml,
        fixed=_fixed,
        redact=secrets.redact,
        json=_json,
        condition=machinestate.condition_text,  # the machine state and the control summarised in one line
    )
    return env


def environment(templates: Path | str | None = None) -> jinja2.Environment:
    """The jinja2 environment: `templates` (a folder) overrides the shipped templates file by file."""
    if templates is not None:
        folder = Path(templates).expanduser()
        if not folder.is_dir():
            raise ConfigError(f"--templates {templates}: no such folder")
        return _environment(str(folder.resolve()))
    return _environment(None)


# The languages of the notes, reports and decisions: English (the default), and Korean (`[report] lang = "ko"`,
# `--lang ko`), whose templates are `<name>.ko.<ext>.j2` beside the English ones (`correction.ko.md.j2`).
LANGS = ("en", "ko")


def check_lang(lang: str | None) -> str:
    """`lang` as a known language (None: English); anything else is a one-line ConfigError."""
    if lang is None or lang == "":
        return "en"
    if lang not in LANGS:
        raise ConfigError(f"language {lang!r} is not one of: {', '.join(LANGS)}")
    return str(lang)


def localized(name: str, lang: str | None) -> str:
    """The template of `name` in `lang`: `correction.md.j2` → `correction.ko.md.j2` for Korean."""
    lang = check_lang(lang)
    if lang == "en":
        return name
    stem, _, rest = name.partition(".")
    return f"{stem}.{lang}.{rest}"


def render(name: str, data: Mapping[str, Any], templates: Path | str | None = None, lang: str | None = None) -> str:
    """Render template `name` (in `lang`, when it has a template in that language) with `data` (plain values only);
    errors become one-line ConfigErrors."""
    import jinja2

    env = environment(templates)
    try:
        try:
            template = env.get_template(localized(name, lang))
        except jinja2.TemplateNotFound:
            template = env.get_template(name)
        text = template.render(**data)
    except jinja2.TemplateNotFound:
        raise ConfigError(f"template {name!r} not found") from None
    except jinja2.UndefinedError as exc:
        raise ConfigError(f"template {name!r}: {exc.message}") from None
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"template {exc.name or name!r} line {exc.lineno}: {exc.message}") from None
    except jinja2.TemplateError as exc:
        raise ConfigError(f"template {name!r}: {exc}") from None
    text = terminal.without_surrogates(secrets.redact(text))  # a file name that is not UTF-8 as `\\xNN`
    return text if text.endswith("\n") else text + "\n"
