"""Citation markers in Markdown: `<!-- fact: ID -->text<!-- /fact -->`, parsed, rendered and found.

Syntax (HTML comments, so the text stays readable in raw Markdown and on GitHub):

    decoding runs at <!-- fact: gamebox/a3b/tg32 -->11.9 ± 7.2 tok/s<!-- /fact --> here.
    <!-- fact: gamebox/a3b/tg32 format="{value:.1f} tok/s (n={n})" -->11.9 tok/s (n=5)<!-- /fact -->
    <!-- fact: gamebox/a3b/tg32 asof -->11.9 ± 7.2 tok/s (as of 2026-10-26)<!-- /fact -->
    <!-- fact: night/a3b/ttft flags -->0.130 s (use with care: cold, few_samples)<!-- /fact -->

`format` is a Python format string over the fields in `FIELDS`, with a width of at most `MAX_WIDTH` and a precision
of at most `MAX_PRECISION` (a larger one is a marker problem, refused before anything is formatted, so a marker
cannot make `docs check` allocate gigabytes); `asof` appends the measurement date; `flags` appends the integrity
flags that call for care (`display.CARE_FLAGS`: cold, thinking_on, cache_hit, few_samples, high_variance), if any. Markers in
YAML front matter, fenced and indented code blocks and inline code spans (as `factreg.docs.markdown` reads them,
the same reading as `docs lint`'s) are examples, not citations, and are ignored. An unclosed, nested or stray
marker, a bad id or an unknown option is a `MarkerProblem` with its line, never an exception. An opening marker
holds no line break and no `<!--` (not even inside `format="…"`), so parsing is one pass however many markers a
paragraph holds.

What is rendered between the markers is inert (`inert`): a unit, a date or a format's own text that holds `<!--`,
`-->`, a backtick, a line break or a trailing backslash is written with HTML character references instead (they
read the same on GitHub), so nothing rendered can close the marker, open another, or turn the rest of the
paragraph into code; `docs sync` run twice gives the same bytes.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factreg.docs import markdown
from factreg.docs.markdown import front_matter_end as front_matter_end
from factreg.errors import UsageError
from factreg.registry import display
from factreg.registry.ids import check_id

NEEDLE = "<!--"
# The display fields (registry.display) a marker's format may use.
FIELDS = ("value", "spread", "unit", "n", "median", "mean", "min", "max", "ci_lo", "ci_hi", "measured_at", "date", "id")

# An opening marker: `<!-- fact: ID [format="..."] [asof] -->`; a closing one: `<!-- /fact -->`.
# The body of an opening marker is read up to its first `-->` outside double quotes; it cannot hold a line break or
# another `<!--` (quoted or not), so reading from each `<!--` stops at the next one: one pass over a paragraph,
# however many unclosed `<!-- fact:` it holds. `(?=(?P<body>…))(?P=body)` reads the body once and never gives
# any of it back (an atomic group that Python 3.10's `re` can express). `body` keeps its surrounding spaces.
_TAG = re.compile(
    r"<!--\s*(?:(?P<close>/fact)\s*-->"
    r"|fact\s*:(?=(?P<body>\s*(?:[^\"\n<-]|<(?!!--)|-(?!->)|\"(?:[^\"\n<]|<(?!!--))*\")*))(?P=body)\s*-->)"
)
# A format spec (Python's mini-language, 3.11+): [[fill]align][sign][z][#][0][width][grouping][.precision][type].
_SPEC = re.compile(
    r"(?:(?P<fill>.)?[<>=^])?[-+ ]?z?#?0?(?P<width>[0-9]+)?[,_]?(?:\.(?P<precision>[0-9]+))?[bcdeEfFgGnosxX%]?", re.S
)
MAX_WIDTH = 64
MAX_PRECISION = 20
_ATTR = re.compile(r"\s*(?:(?P<key>[A-Za-z_][\w-]*)\s*=\s*\"(?P<val>[^\"]*)\"|(?P<flag>[A-Za-z_][\w-]*))")


@dataclass(frozen=True)
class Marker:
    """One citation: where it is, which fact it cites, how it renders, and the text it holds now."""

    fact_id: str
    format: str | None
    asof: bool
    text: str
    line: int  # 1-based line of the opening marker
    col: int  # 1-based column of the opening marker
    start: int  # offset of `<!--` of the opening marker
    end: int  # offset just after the closing marker
    text_start: int
    text_end: int
    id_start: int  # offsets of the id inside the document, to rewrite it
    id_end: int
    flags: bool = False  # the `flags` option: the value is followed by its integrity flags


@dataclass(frozen=True)
class MarkerProblem:
    """A marker that cannot be used, and why."""

    line: int
    col: int
    message: str
    fact_id: str | None = None


@dataclass(frozen=True)
class Citation:
    """A place in a document that cites a fact."""

    path: Path
    line: int
    fact_id: str
    text: str


def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def may_hold(text: str) -> bool:
    """Whether a document's text may hold a marker or a broken one: `parse` finds nothing in any other."""
    return "fact" in text and NEEDLE in text


def parse(text: str) -> tuple[list[Marker], list[MarkerProblem]]:
    """Every marker in a document, and the problems of those that cannot be used."""
    if not may_hold(text):
        return [], []
    begin = front_matter_end(text)
    tags = [m for m in _TAG.finditer(text, begin)]
    if not tags:
        return [], []
    code = markdown.code_regions(text, begin)
    tags = [t for t in tags if not code.covers(t.start())]
    if not tags:
        return [], []
    starts = _line_starts(text)

    from bisect import bisect_right

    def where(offset: int) -> tuple[int, int]:
        line = bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    markers: list[Marker] = []
    problems: list[MarkerProblem] = []
    open_tag: re.Match[str] | None = None
    broken = False  # the open marker already has a problem (nested): drop it at its close
    for tag in tags:
        if tag.group("close"):
            if open_tag is None:
                line, col = where(tag.start())
                problems.append(MarkerProblem(line, col, "closing <!-- /fact --> without an opening marker"))
                continue
            if not broken:
                made = _marker(text, open_tag, tag, where)
                if isinstance(made, MarkerProblem):
                    problems.append(made)
                else:
                    markers.append(made)
            open_tag, broken = None, False
            continue
        if open_tag is not None:
            line, col = where(tag.start())
            oline, _ = where(open_tag.start())
            problems.append(
                MarkerProblem(
                    line,
                    col,
                    f"nested marker: a fact marker inside the one opened on line "
                    f"{oline}; close each marker with <!-- /fact --> before opening another",
                    _raw_id(tag),
                )
            )
            broken = True
            continue
        open_tag = tag
    if open_tag is not None and not broken:
        line, col = where(open_tag.start())
        problems.append(MarkerProblem(line, col, "unclosed marker: no <!-- /fact --> after it", _raw_id(open_tag)))
    return markers, problems


def _raw_id(tag: re.Match[str]) -> str | None:
    body = (tag.group("body") or "").split()
    return body[0] if body else None


def _marker(
    text: str, open_tag: re.Match[str], close_tag: re.Match[str], where: Callable[[int], tuple[int, int]]
) -> Marker | MarkerProblem:
    line, col = where(open_tag.start())
    raw = open_tag.group("body") or ""
    body = raw.lstrip()
    body_start = open_tag.start("body") + len(raw) - len(body)
    body = body.rstrip()
    parts = body.split(None, 1)
    if not parts:
        return MarkerProblem(line, col, "marker without a fact id: write <!-- fact: ID -->")
    fact_id = parts[0]
    try:
        check_id(fact_id)
    except UsageError as exc:
        return MarkerProblem(line, col, exc.message, fact_id)
    id_start = body_start + body.index(fact_id)
    rest = body[len(parts[0]) :]
    fmt_text: str | None = None
    asof = flags = False
    pos = 0
    while pos < len(rest):
        m = _ATTR.match(rest, pos)
        if not m or m.end() == pos:
            if not rest[pos:].strip():
                break
            return MarkerProblem(
                line, col, f'cannot read marker option {rest[pos:].strip()!r}: use format="...", asof and flags', fact_id
            )
        pos = m.end()
        if m.group("flag"):
            if m.group("flag") not in ("asof", "flags"):
                return MarkerProblem(
                    line, col, f"unknown marker option {m.group('flag')!r} (known: format, asof, flags)", fact_id
                )
            if m.group("flag") == "asof":
                asof = True
            else:
                flags = True
        elif m.group("key") == "format":
            fmt_text = m.group("val")
            bad = check_format(fmt_text)
            if bad:
                return MarkerProblem(line, col, bad, fact_id)
        else:
            return MarkerProblem(line, col, f"unknown marker option {m.group('key')!r} (known: format, asof, flags)",
                                 fact_id)
    return Marker(
        fact_id=fact_id,
        format=fmt_text,
        asof=asof,
        text=text[open_tag.end() : close_tag.start()],
        line=line,
        col=col,
        start=open_tag.start(),
        end=close_tag.end(),
        text_start=open_tag.end(),
        text_end=close_tag.start(),
        id_start=id_start,
        id_end=id_start + len(fact_id),
        flags=flags,
    )


def check_format(template: str) -> str | None:
    """Why a marker's format string cannot be used (only plain fields from FIELDS), or None."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        return f"bad format string {template!r}: {exc}"
    for _, field, spec, _conv in parsed:
        if field is None:
            continue
        if field not in FIELDS:
            return f"format field {{{field}}} is not one of: {', '.join(FIELDS)}"
        if spec and "{" in spec:
            return f"bad format string {template!r}: nested fields are not allowed"
        if spec:
            bad = _check_spec(field, spec)
            if bad:
                return bad
    return None


def _check_spec(field: str, spec: str) -> str | None:
    """Why `{field:spec}` is refused: not a plain format spec, or a width or precision over the caps."""
    m = _SPEC.fullmatch(spec)
    if m is None:
        return f"format {{{field}:{spec[:40]}}}: not a format spec (write e.g. {{{field}:.1f}} or {{{field}:>8}})"
    for part, cap in (("width", MAX_WIDTH), ("precision", MAX_PRECISION)):
        digits = (m.group(part) or "").lstrip("0")
        if len(digits) > 3 or (digits and int(digits) > cap):  # compared as text first: no huge int is made
            shown = digits if len(digits) <= 12 else digits[:12] + "…"
            return f"format {{{field}:…}}: {part} {shown} is over the limit of {cap}"
    return None


def fields(fact: Mapping[str, Any]) -> display.Shown:
    """The values a marker's format string may use."""
    return display.fields(fact, FIELDS)


def render(fact: Mapping[str, Any], template: str | None = None, asof: bool = False, flags: bool = False) -> str:
    """A marker's text for a fact: `11.9 ± 7.2 tok/s` by default; raises UsageError when the format cannot apply."""
    if template is None:
        text = display.text(fact)
    else:
        bad = check_format(template)  # the caps hold whoever calls this, not only for parsed markers
        if bad:
            raise UsageError(bad)
        values = fields(fact)
        try:
            text = template.format_map(values)
        except (KeyError, ValueError, TypeError, IndexError, AttributeError) as exc:
            missing = [k for k in FIELDS if "{" + k in template and values.get(k) is None]
            why = f"fact {fact.get('id')} has no {', '.join(missing)}" if missing else str(exc)
            raise UsageError(f"format {template!r} cannot be rendered: {why}") from None
    if asof:
        text += f" (as of {(fact.get('measured_at') or '')[:10]})"
    care = display.care_flags(fact) if flags else []
    if care:
        text += f" (use with care: {', '.join(care)})"
    return inert(text)


# What rendered text may not hold between markers, and what is written instead (HTML character references): the `<`
# that opens a comment, the `>` that closes one, backticks, line breaks and a backslash that would escape the `<` of
# the closing marker. Each is one character replaced by text without `<`, `>`, `-` or `!`, so no new delimiter forms.
_INERT = re.compile(r"<(?=!--)|(?<=--)>|[`\r\n]|\\\Z")
_INERT_AS = {"<": "&lt;", ">": "&gt;", "`": "&#96;", "\r": " ", "\n": " ", "\\": "&#92;"}


def inert(text: str) -> str:
    """`text` made safe to stand between an opening and a closing marker: no comment delimiter (so no marker),
    no backtick (no code span swallowing the closing marker), no line break, no trailing backslash."""
    if _INERT.search(text) is None:
        return text
    return _INERT.sub(lambda m: _INERT_AS[m.group()], text)


def replace_spans(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, new) span replaced; spans must not overlap."""
    out: list[str] = []
    pos = 0
    for start, end, new in sorted(edits):
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def find_citations(paths: Iterable[Path | str], fact_id: str | None = None) -> list[Citation]:
    """Every citation in the Markdown under `paths` (only those of `fact_id` when given), in path/line order.

    Unreadable files and broken markers are passed over silently here; `docs check` reports them.
    """
    from factreg.docs import walk

    out: list[Citation] = []
    for path, text in walk.documents(paths):
        if isinstance(text, walk.Problem):
            continue
        if fact_id is not None and fact_id not in text:
            continue
        markers, _ = parse(text)
        out.extend(
            Citation(path, m.line, m.fact_id, m.text) for m in markers if fact_id is None or m.fact_id == fact_id
        )
    return out
