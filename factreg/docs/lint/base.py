"""What surrounds a number in one document: its line, its clause, its sentence, and the line flags (asked once per
line)."""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache

from factreg.docs import literals
from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.vocab import _LINE_FLAGS, _REACH, _line_end

# Where a clause ends: a table cell, a sentence, a list of items (a comma), a dash between statements.
_CLAUSE_STOP = lazy(r"\||[.!?](?:\s|$)|[;,，。]|\s[—–]\s|\n")


# Where a sentence ends, and the abbreviations whose dot does not end one (`that e.g. improves …`).
_SENTENCE_END = lazy(r"(?<![A-Za-z]\.[a-z])(?<!\betc)(?<!\bvs)[.?!](?:\s|$)")


_ABBREVIATION_END = lazy(r"(?:\b[A-Za-z]\.[a-z]|\betc|\bvs)\.$")


_NEWLINE = lazy("\n")


# A table's separator row (`|---|---|`, `---|---`): GFM's tables need no pipe at either end of a row.
_TABLE_SEP = lazy(r"(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$")


def in_row(text: str, lo: int, start: int) -> bool:
    """Whether `start`, on the line from `lo`, stands in a table row: one with a leading pipe, or a line with a pipe
    below a table's separator row (GFM's rows need none; the tables worked out once per document, and only when
    such a line is asked about)."""
    if text[lo:start].lstrip().startswith("|"):
        return True
    return text.find("|", lo, _line_end(text, start)) >= 0 and lo in _headers(text)


def _cell_context(text: str, pos: int) -> tuple[str, str, str, list[str]]:
    """For a number at `pos` in a table row: the text of its cell, of its row's label (the first cell), of its
    column's header cell (the row above the table's separator; empty when there is none) and of the row's other
    cells."""
    lo = text.rfind("\n", 0, pos) + 1
    hi = text.find("\n", pos)
    line = text[lo : len(text) if hi < 0 else hi]
    cells = line.strip().strip("|").split("|")
    col = text.count("|", lo, pos) - (1 if line.lstrip().startswith("|") else 0)
    cell = cells[col] if 0 <= col < len(cells) else line
    heads = _header_row(text, lo)
    header = heads[col] if 0 <= col < len(heads) else ""
    return cell, cells[0] if cells else "", header, [c for i, c in enumerate(cells) if i != col]


def _header_row(text: str, lo: int) -> list[str]:
    """The header cells of the table whose body row starts at `lo` (the row above its separator row; none when
    there is no separator above the row)."""
    return _headers(text).get(lo, [])


@lru_cache(maxsize=2)  # the document being linted (a text's hash is worked out once)
def _headers(text: str) -> dict[int, list[str]]:
    """The header cells of each body row's table, by the row's start: the nearest separator row above it, with only
    rows between (and the first line after a table's last row), each line read once per document."""
    out: dict[int, list[str]] = {}
    if "|" not in text or "--" not in text:
        return out
    for sep in _TABLE_SEP.finditer(text):
        h_lo = text.rfind("\n", 0, max(0, sep.start() - 1)) + 1
        cells = text[h_lo : max(h_lo, sep.start() - 1)].strip().strip("|").split("|")
        lo = sep.end() + 1
        while lo < len(text):
            out[lo] = cells
            hi = text.find("\n", lo)
            hi = len(text) if hi < 0 else hi
            if "|" not in text[lo:hi] or _TABLE_SEP.fullmatch(text, lo, hi):
                break  # not a row (GFM's rows need no leading pipe), or the next table's separator
            lo = hi + 1
    return out


class _Screens(dict[str, literals.Screen]):
    """The literal pre-test of each line flag's pattern, worked out (and the pattern compiled) when that flag is
    first asked: a file whose numbers ask two flags pays for two patterns."""

    def __missing__(self, name: str) -> literals.Screen:
        screen = self[name] = literals.screen(_LINE_FLAGS[name])
        return screen


_SCREENS: dict[str, literals.Screen] = _Screens()


def _line_screens() -> dict[str, literals.Screen]:
    """The literal pre-tests of the line flags' patterns, each worked out on its first use."""
    return _SCREENS


class _Base:
    def __init__(self, text: str) -> None:
        self.text = text
        self._newlines: list[int] | None = None
        # literals.ENABLED False: every shortcut below is off (the reference they are tested against)
        self._fast = literals.ENABLED
        self._screens = _line_screens() if self._fast else None
        # the line last asked about (numbers are read in order, so most questions are about the same line): its
        # start and end, its flags and its folded text
        self._lo = 0
        self._hi = -1
        self._flags: dict[str, bool] = {}
        self._folded: str | None = None
        self._clauses: dict[tuple[int, int], str] = {}

    def _bounds(self, pos: int) -> tuple[int, int]:
        """The whole line holding `pos`: its start, and its end (the offset of its newline or of the text's end)."""
        if self._lo <= pos <= self._hi and self._fast:
            return self._lo, self._hi
        if self._newlines is None:
            self._newlines = [m.start() for m in _NEWLINE.finditer(self.text)]
        nl = self._newlines
        i = bisect_right(nl, pos - 1)
        lo = nl[i - 1] + 1 if i > 0 else 0
        hi = nl[i] if i < len(nl) else len(self.text)
        self._lo, self._hi, self._flags, self._folded = lo, hi, {}, None
        return lo, hi

    def _in_row(self, lo: int, start: int) -> bool:
        return in_row(self.text, lo, start)

    def _line(self, pos: int) -> tuple[int, int]:
        """The line around `pos`, cut to _REACH characters either side (a very long line costs no more)."""
        lo, hi = self._bounds(pos)
        return max(lo, pos - _REACH), min(hi, pos + _REACH)

    def _flag(self, pos: int, name: str) -> bool:
        """A property of the whole line holding `pos`, worked out once per line and only when asked."""
        if self._lo <= pos <= self._hi and self._fast:  # the line last asked about (most questions): no call
            value = self._flags.get(name)
            if value is not None:
                return value
        lo, hi = self._bounds(pos)
        value = self._flags.get(name)
        if value is None:
            flags = self._flags
            if self._screens is not None and not self._may_match(lo, hi, name):
                value = flags[name] = False  # the line holds none of the literals every match holds
            else:
                value = flags[name] = _LINE_FLAGS[name].search(self.text, lo, hi) is not None
        return value

    def _later(self, pos: int, name: str) -> bool:
        """A line flag of the later classes, asked only when the line holds a literal of one of them."""
        if self._lo <= pos <= self._hi and self._flags.get("later") is False and self._fast:
            return False
        return self._flag(pos, "later") and self._flag(pos, name)

    def _may_match(self, lo: int, hi: int, name: str) -> bool:
        """The pre-test of a line flag's pattern (factreg.docs.literals) on the line from `lo` to `hi`."""
        assert self._screens is not None
        screen = self._screens[name]
        if screen.needs is None:
            return True
        folded = self._folded
        if folded is None:
            folded = self._folded = literals.fold(self.text[lo:hi])
        return screen.may_match(folded)

    def _before(self, start: int, limit: int = 60) -> str:
        """The clause before a number: back to the previous cell, sentence or list item, at most `limit` chars."""
        key = (start, -limit)
        found = self._clauses.get(key) if self._fast else None
        if found is not None:
            return found
        lo = max(self._line(start)[0], start - limit)
        chunk = self.text[lo:start]
        cut = 0
        for m in _CLAUSE_STOP.finditer(chunk):
            if m.end() < len(chunk) or m.group() in ("|", ","):
                cut = m.end()
        found = self._clauses[key] = chunk[cut:]
        return found

    def _after(self, end: int, limit: int = 40) -> str:
        key = (end, limit)
        found = self._clauses.get(key) if self._fast else None
        if found is not None:
            return found
        hi = min(self._line(end)[1], end + limit)
        chunk = self.text[end:hi]
        m = _CLAUSE_STOP.search(chunk)
        found = self._clauses[key] = chunk[: m.start()] if m else chunk
        return found

    def _line_text(self, pos: int) -> str:
        lo, hi = self._line(pos)
        return self.text[lo:hi]

    def _sentence(self, start: int) -> tuple[str, str]:
        """The sentence holding a number (at most 200 characters before it and 120 after), as (the part before
        the number, the part from it)."""
        lo, hi = self._line(start)
        seg = self.text[max(lo, start - 200) : start]
        stop = max(seg.rfind(". "), seg.rfind("? "), seg.rfind("! "))
        if stop > 0 and seg[stop] == "." and _ABBREVIATION_END.search(seg, 0, stop + 1):
            stop = max((m.start() for m in _SENTENCE_END.finditer(seg, 0, stop)), default=-1)  # `e.g. ` ends none
        tail = self.text[start : min(hi, start + 120)]
        m = _SENTENCE_END.search(tail)
        return seg[stop + 1 :], tail[: m.start() if m else len(tail)]
