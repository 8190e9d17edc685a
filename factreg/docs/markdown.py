"""Which parts of a Markdown document are code: the one scanner behind `docs lint` and the citation markers.

`code_regions(text, begin)` gives a document's code as [start, end) character offsets:

- `blocks`: fenced code blocks (a line of three or more backticks or tildes with up to 3 spaces of indentation; a
  backtick fence's info string may not hold a backtick, so ```` ```a`b ```` starts a paragraph, not a fence; the
  closing fence has the same character, is at least as long, has up to 3 spaces of indentation and only spaces or
  tabs after it; an unclosed fence runs to the end of the document, or of the list item or block quote that holds
  it) and indented code blocks (4 or more columns of indentation, a tab counting to the next multiple of 4; one
  cannot interrupt a paragraph, so an indented line right after text continues that text; blank lines inside
  belong to the block, blank lines after it do not). A block runs from its first line's content to just after its
  last line's line ending.
- `spans`: inline code spans (a run of N backticks up to the next run of exactly N backticks in the same paragraph
  or heading; an escaped backtick, `\\``, opens none; raw HTML and autolinks win when they start first, so a
  backtick inside `<!-- … -->`, such as a citation marker, opens no span).

The block structure is CommonMark 0.31.2's (sections 4 and 5, read with the parsing strategy of its appendix):
block quotes and list items are containers, so the continuation lines of a list item (indented to the item's
content) are prose, while a fence or an indented code block inside a list item or a block quote is code; lazy
continuation lines go on with a paragraph; HTML blocks (a commented-out `<!--` … `-->` section, a `<div>`) hold
no code. tests/test_markdown.py checks this line by line against markdown-it-py, on the spec's examples and on
generated documents.

Not followed: a link reference definition is read as a paragraph (so a setext underline under one makes a heading
here), link destinations and titles do not keep backticks from opening code spans, and a lone carriage return
does not end a line (`\\n` and `\\r\\n` do). YAML front matter is a project rule, not CommonMark: see
`front_matter_end`; blocks are read from its end.

Speed: a text with no backtick, no `~~~`, no tab and no four spaces in a row has no code and costs four substring
searches. Otherwise one pass, linear in the text: outside list items and block quotes, runs of plain paragraph
lines and the inside of fenced code, indented code and HTML blocks are each crossed with one regular-expression
search; only lines inside containers and lines that may start a block are read one by one.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

Range = tuple[int, int]

# ---------------------------------------------------------------------------------------------------------------
# Front matter

_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(?:.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)


def front_matter_end(text: str) -> int:
    """Offset just after YAML front matter (`---` … `---` or `...` at the very top), or 0 when there is none."""
    if not text.startswith(("---", "\ufeff---")):
        return 0
    match = _FRONT.match(text)
    return match.end() if match else 0


# ---------------------------------------------------------------------------------------------------------------
# Blocks

_NONE, _PARA, _FENCE, _ICODE, _HTML = range(5)  # the open leaf block
_QUOTE, _ITEM = range(2)  # container kinds

# What may start a block at a line's first non-space character (anything else there is paragraph text).
_MAYBE_SPECIAL = frozenset("#`~*+_=<>0123456789-")
# Lines of plain paragraph text at the top level: not indented, not blank, not starting like a block.
_TEXT_LINES = re.compile(r"(?:[^ \t\r\n#`~*+_=<>0-9-][^\n]*(?:\n|\Z))+")
_BLANK_LINES = re.compile(r"(?:[ \t]*\r?\n)+|[ \t]*\r?\Z")
_TOP_NOT_INDENTED = re.compile(r"^ {0,3}[^ \t\r\n]", re.M)
_TOP_BLANK = re.compile(r"^[ \t]*\r?$", re.M)
_TOP_FENCE_CLOSE = {
    "`": re.compile(r"^ {0,3}(`{3,})[ \t]*\r?$", re.M),
    "~": re.compile(r"^ {0,3}(~{3,})[ \t]*\r?$", re.M),
}
_FENCE_OPEN = re.compile(r"`{3,}(?!.*`)|~{3,}")
_FENCE_CLOSE = re.compile(r"(?:`{3,}|~{3,})[ \t]*$")
_ATX = re.compile(r"#{1,6}(?:[ \t]|$)")
_SETEXT = re.compile(r"(?:=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"(?:\*[ \t]*){3,}$|(?:-[ \t]*){3,}$|(?:_[ \t]*){3,}$")
_ORDERED = re.compile(r"([0-9]{1,9})[.)]")

# Raw HTML (CommonMark 6.6) and autolinks (6.5); inside a paragraph a line ending is one more space.
_WS = r"[ \t\r\n]"
_TAG_NAME = r"[A-Za-z][A-Za-z0-9-]*"
_ATTRIBUTE = rf"(?:{_WS}+[A-Za-z_:][A-Za-z0-9_.:-]*(?:{_WS}*={_WS}*(?:[^ \t\r\n\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)"
_OPEN_TAG = rf"<{_TAG_NAME}{_ATTRIBUTE}*{_WS}*/?>"
_CLOSE_TAG = rf"</{_TAG_NAME}{_WS}*>"
_ANGLE = re.compile(
    r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\x00-\x20\x7f]*>"
    r"|<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>"
    rf"|{_OPEN_TAG}|{_CLOSE_TAG}|<\?.*?\?>|<![A-Za-z][^>]*>|<!\[CDATA\[.*?\]\]>",
    re.S,
)
_BLOCK_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|"
    "dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|"
    "menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|"
    "title|tr|track|ul"
)
# HTML blocks (CommonMark 4.6): the start and end conditions of kinds 1 to 7 (kinds 6 and 7 end at a blank line;
# kind 7 cannot interrupt a paragraph; tag names are read in any case, `CDATA` only in capitals).
_HTML_KINDS = (
    (r"(?i:<(?:pre|script|style|textarea)(?:[ \t>]|$))", r"(?i:</(?:pre|script|style|textarea)>)"),
    (r"<!--", r"-->"),
    (r"<\?", r"\?>"),
    (r"<![A-Za-z]", r">"),
    (r"<!\[CDATA\[", r"\]\]>"),
    (rf"(?i:</?(?:{_BLOCK_TAGS})(?:[ \t>]|/>|$))", None),
    (rf"(?:{_OPEN_TAG}|{_CLOSE_TAG})[ \t]*$", None),
)
_HTML_START = tuple(re.compile(start) for start, _ in _HTML_KINDS)
_HTML_END = tuple(re.compile(end) for _, end in _HTML_KINDS if end)


class _Blocks:
    """CommonMark's block structure, kept to what tells code from prose: the code blocks and the paragraphs."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.blocks: list[Range] = []  # fenced and indented code
        self.inline: list[Range] = []  # paragraphs and headings: where code spans may be
        self.stack: list[list[int]] = []  # open containers: [kind, content indent of an item, has a child]
        self.leaf = _NONE
        self.leaf_start = self.leaf_end = 0  # a paragraph ends at its last line's end, code after its line ending
        self.fence_char = ""
        self.fence_len = 0
        self.html_kind = 0
        # the line being read: position and column reached, end of its text, next non-space character
        self.offset = self.column = self.eol = 0
        self.nn = self._nn_col = self.indent = 0
        self.blank = False

    def run(self, pos: int) -> None:
        text = self.text
        n = len(text)
        while pos < n:
            if not self.stack:  # at the top level whole runs of lines are crossed with one search
                leaf = self.leaf
                if leaf in (_NONE, _PARA):
                    lines = _TEXT_LINES.match(text, pos)
                    if lines:  # plain paragraph lines
                        if leaf == _NONE:
                            self.leaf, self.leaf_start = _PARA, pos
                        pos = lines.end()
                        self.leaf_end = pos - 1 if text[pos - 1] == "\n" else pos
                    blanks = _BLANK_LINES.match(text, pos)
                    if blanks and blanks.end() > pos:  # they end a paragraph
                        if self.leaf == _PARA:
                            self.inline.append((self.leaf_start, self.leaf_end))
                            self.leaf = _NONE
                        pos = blanks.end()
                        continue
                    if lines:
                        continue
                elif leaf == _FENCE:
                    pos = self._top_fence(pos)
                    continue
                elif leaf == _ICODE:
                    pos = self._top_indented(pos)
                    continue
                else:
                    pos = self._top_html(pos)
                    continue
            hi = text.find("\n", pos)
            nxt = hi + 1 if hi >= 0 else n
            if hi < 0:
                hi = n
            self._line(pos, hi - 1 if hi > pos and text[hi - 1] == "\r" else hi, nxt)
            pos = nxt
        self._close(0)

    # --- the top level, where no container has to be matched -----------------------------------------------

    def _top_fence(self, pos: int) -> int:
        text = self.text
        for m in _TOP_FENCE_CLOSE[self.fence_char].finditer(text, pos):
            if len(m.group(1)) >= self.fence_len:
                hi = text.find("\n", m.end())
                self.leaf_end = hi + 1 if hi >= 0 else len(text)
                self._close(0)
                return self.leaf_end
        self.leaf_end = len(text)
        self._close(0)
        return len(text)

    def _top_indented(self, pos: int) -> int:
        text = self.text
        m = _TOP_NOT_INDENTED.search(text, pos)
        stop = m.start() if m else len(text)
        k = stop
        while k > pos and text[k - 1] in " \t\r\n":
            k -= 1
        if k > pos:  # the last line that is not blank ends the block
            hi = text.find("\n", k)
            self.leaf_end = hi + 1 if hi >= 0 else len(text)
        self._close(0)
        return stop

    def _top_html(self, pos: int) -> int:
        text = self.text
        self.leaf = _NONE
        if self.html_kind >= 6:
            m = _TOP_BLANK.search(text, pos)
            return m.start() if m else len(text)
        m = _HTML_END[self.html_kind - 1].search(text, pos)
        if m is None:
            return len(text)
        hi = text.find("\n", m.end())
        return hi + 1 if hi >= 0 else len(text)

    # --- one line -----------------------------------------------------------------------------------------------

    def _line(self, lo: int, eol: int, nxt: int) -> None:
        """Read the line [lo, eol) (`nxt` is where the next one starts) as CommonMark's block parser does."""
        self.offset, self.column, self.eol = lo, 0, eol
        depth = self._containers()
        leaf = self.leaf
        para = False  # whether the line goes on with an open paragraph (rather than lazily)
        if depth == len(self.stack) and leaf != _NONE:
            goes_on = self._leaf_line(depth, eol, nxt)
            if goes_on is None:
                return
            para = goes_on
        all_closed = depth == len(self.stack) and (leaf == _NONE or para)
        depth, para, done = self._new_blocks(depth, eol, nxt, para, all_closed)
        if not done:
            self._text_line(depth, eol, para, all_closed)

    def _containers(self) -> int:
        """How many of the open containers (quotes, list items) the line continues; their markers are passed."""
        text = self.text
        depth = 0
        for kind, need, has_child in self.stack:
            self._find_nonspace()
            if kind == _QUOTE:
                if self.indent >= 4 or self.blank or text[self.nn] != ">":
                    break
                self._quote_marker()
            elif self.blank:
                if not has_child:
                    break  # a list item may begin with one blank line, not two
                self._to_nonspace()
            elif self.indent >= need:
                self._advance(need, True)
            else:
                break
            depth += 1
        return depth

    def _leaf_line(self, depth: int, eol: int, nxt: int) -> bool | None:
        """A line that continues every container, with a leaf block open: None when the line belongs to that block
        (a fence's, indented code's or an HTML block's line) and is read; else whether it goes on with the open
        paragraph."""
        text = self.text
        leaf = self.leaf
        self._find_nonspace()
        if leaf == _FENCE:
            if self.indent < 4 and not self.blank and text[self.nn] == self.fence_char:
                m = _FENCE_CLOSE.match(text, self.nn, eol)
                if m and len(m.group().rstrip(" \t")) >= self.fence_len:
                    self.leaf_end = nxt
                    self._close(depth)
                    return None
            self.leaf_end = nxt
            return None
        if leaf == _ICODE:
            if self.indent >= 4:
                self.leaf_end = nxt
                return None
            if self.blank:
                return None
        elif leaf == _HTML:
            if not (self.blank and self.html_kind >= 6):
                if self.html_kind <= 5 and _HTML_END[self.html_kind - 1].search(text, self.offset, eol):
                    self.leaf = _NONE
                return None
        elif not self.blank:
            return True
        return False

    def _new_blocks(self, depth: int, eol: int, nxt: int, para: bool, all_closed: bool) -> tuple[int, bool, bool]:
        """Open the blocks that start on this line, as many as there are (`- > ```` opens an item, a quote and a
        fence): the depth and `para` after them, and whether the line is read (a leaf block took it)."""
        text = self.text
        stack = self.stack
        while True:
            self._find_nonspace()
            ch = "" if self.blank else text[self.nn]
            if self.indent < 4:
                if ch not in _MAYBE_SPECIAL:
                    break
                if ch == ">":
                    self._quote_marker()
                    self._open(depth)
                    stack.append([_QUOTE, 0, 1])
                    depth += 1
                    para = False
                    continue
                if self._leaf_start(ch, depth, eol, nxt, para, all_closed):
                    return depth, para, True
                need = self._list_marker(para)
                if need:
                    self._open(depth)
                    stack.append([_ITEM, need, 0])
                    depth += 1
                    para = False
                    continue
            elif self.leaf != _PARA and not self.blank:  # indented code, which cannot interrupt a paragraph
                start = self.offset
                self._advance(4, True)
                self._open(depth)
                self.leaf, self.leaf_start, self.leaf_end = _ICODE, start, nxt
                return depth, para, True
            break
        return depth, para, False

    def _leaf_start(self, ch: str, depth: int, eol: int, nxt: int, para: bool, all_closed: bool) -> bool:
        """Whether a leaf block (an ATX heading, a fence, an HTML block, a setext underline, a thematic break)
        starts at the next non-space character `ch` and takes the line."""
        text = self.text
        if ch == "#":
            m = _ATX.match(text, self.nn, eol)
            if m:
                self._open(depth)
                self.inline.append((m.end(), eol))
                return True
        if ch == "`" or ch == "~":
            m = _FENCE_OPEN.match(text, self.nn, eol)
            if m:
                self._open(depth)
                self.leaf, self.leaf_start, self.leaf_end = _FENCE, self.offset, nxt
                self.fence_char, self.fence_len = ch, m.end() - m.start()
                return True
        if ch == "<":
            lazy_para = not all_closed and self.leaf == _PARA
            kind = self._html_start(para or lazy_para)
            if kind:
                self._open(depth)
                if kind >= 6 or not _HTML_END[kind - 1].search(text, self.offset, eol):
                    self.leaf, self.html_kind = _HTML, kind
                return True
        if para and (ch == "=" or ch == "-") and _SETEXT.match(text, self.nn, eol):
            self._close(depth)  # the paragraph becomes a heading
            return True
        if (ch == "*" or ch == "-" or ch == "_") and _THEMATIC.match(text, self.nn, eol):
            self._open(depth)
            return True
        return False

    def _text_line(self, depth: int, eol: int, para: bool, all_closed: bool) -> None:
        """The rest of a line no leaf block took: it goes on with a paragraph (lazily or not), or starts one."""
        self._to_nonspace()
        if para:
            self.leaf_end = eol
        elif not all_closed and not self.blank and self.leaf == _PARA:
            self.leaf_end = eol  # a lazy continuation line
        else:
            self._close(depth)
            if not self.blank:
                self._open(depth)
                self.leaf, self.leaf_start, self.leaf_end = _PARA, self.offset, eol

    def _html_start(self, after_para: bool) -> int:
        """The kind of HTML block starting at the next non-space character (1 to 7), or 0."""
        for kind, start in enumerate(_HTML_START, 1):
            if start.match(self.text, self.nn, self.eol):
                return 0 if kind == 7 and after_para else kind
        return 0

    def _list_marker(self, para: bool) -> int:
        """The content indent of a list item whose marker is at the next non-space character, or 0 (CommonMark
        5.2); moves past the marker and the spaces after it."""
        text, eol, nn = self.text, self.eol, self.nn
        ch = text[nn]
        if ch == "-" or ch == "+" or ch == "*":
            width = 1
        else:
            m = _ORDERED.match(text, nn, eol)
            if m is None or (para and int(m.group(1)) != 1):
                return 0  # only a list that starts at 1 may interrupt a paragraph
            width = m.end() - nn
        after = nn + width
        if after < eol and text[after] not in " \t":
            return 0
        if para and not text[after:eol].strip(" \t"):
            return 0  # an empty item cannot interrupt a paragraph
        marker_indent = self.indent
        self._to_nonspace()
        self._advance(width, True)
        start_col, start_offset = self.column, self.offset
        self._advance(1, True)
        while self.column - start_col < 5 and self.offset < eol and text[self.offset] in " \t":
            self._advance(1, True)
        spaces = self.column - start_col
        if spaces >= 5 or spaces < 1 or self.offset >= eol:
            # an item that starts with indented code or a blank line: its content is one space after the marker
            width += 1
            self.column, self.offset = start_col, start_offset
            if self.offset < eol and text[self.offset] in " \t":
                self._advance(1, True)
        else:
            width += spaces
        return marker_indent + width

    def _quote_marker(self) -> None:
        self._to_nonspace()
        self._advance(1, False)
        if self.offset < self.eol and self.text[self.offset] in " \t":
            self._advance(1, True)

    # --- blocks opened and closed ---------------------------------------------------------------------------

    def _close(self, depth: int) -> None:
        """Close the open leaf block and the containers deeper than `depth`."""
        leaf = self.leaf
        if leaf == _PARA:
            self.inline.append((self.leaf_start, self.leaf_end))
        elif leaf in (_FENCE, _ICODE):
            self.blocks.append((self.leaf_start, self.leaf_end))
        self.leaf = _NONE
        del self.stack[depth:]

    def _open(self, depth: int) -> None:
        """Make room for a new block in the container at `depth`."""
        self._close(depth)
        if depth:
            self.stack[depth - 1][2] = 1

    # --- columns (a tab advances to the next multiple of 4) -------------------------------------------------

    def _find_nonspace(self) -> None:
        text, eol = self.text, self.eol
        i, col = self.offset, self.column
        while i < eol:
            c = text[i]
            if c == " ":
                col += 1
            elif c == "\t":
                col += 4 - col % 4
            else:
                break
            i += 1
        self.nn, self.indent, self.blank = i, col - self.column, i >= eol
        self._nn_col = col

    def _to_nonspace(self) -> None:
        self._find_nonspace()
        self.offset, self.column = self.nn, self._nn_col

    def _advance(self, count: int, columns: bool) -> None:
        text, eol = self.text, self.eol
        while count > 0 and self.offset < eol:
            if text[self.offset] == "\t":
                to_tab = 4 - self.column % 4
                if columns:
                    step = min(to_tab, count)
                    self.column += step
                    if to_tab <= count:
                        self.offset += 1
                    count -= step
                else:
                    self.column += to_tab
                    self.offset += 1
                    count -= 1
            else:
                self.offset += 1
                self.column += 1
                count -= 1


# ---------------------------------------------------------------------------------------------------------------
# Code spans

_INLINE_SPECIAL = re.compile(r"[\\`<]")
_BACKTICKS = re.compile(r"`+")
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _code_spans(text: str, inline: list[Range]) -> list[Range]:
    """The code spans in each paragraph or heading (CommonMark 6.1), read left to right with backslash escapes,
    autolinks and raw HTML, whichever starts first."""
    spans: list[Range] = []
    tick = -1  # the first backtick at or after the paragraph being looked at
    for lo, hi in inline:
        if tick < lo:
            tick = text.find("`", lo)
            if tick < 0:
                break
        if tick >= hi:
            continue
        runs: dict[int, list[int]] = {}  # backtick runs by length: where a span of that many may close
        for run in _BACKTICKS.finditer(text, lo, hi):
            runs.setdefault(run.end() - run.start(), []).append(run.start())
        pos = lo
        unclosed = hi
        ends: tuple[int, int, int] | None = None  # the last `>`, `?>` and `]]>` of the paragraph, once needed
        while True:
            special = _INLINE_SPECIAL.search(text, pos, hi)
            if special is None:
                break
            at = special.start()
            ch = text[at]
            if ch == "`":
                end = at + 1
                while end < hi and text[end] == "`":
                    end += 1
                width = end - at
                closes = runs.get(width, [])
                i = bisect_left(closes, end)
                if i < len(closes):
                    spans.append((at, closes[i] + width))
                    pos = closes[i] + width
                else:
                    pos = end  # no closing run: the backticks are text
            elif ch == "\\":
                pos = at + 2 if at + 1 < hi and text[at + 1] in _ASCII_PUNCTUATION else at + 1
            elif text.startswith("<!--", at):  # a comment ends at the first `-->` (`<!-->` and `<!--->` too)
                close = text.find("-->", at + 2, hi) if at < unclosed else -1
                if close < 0:
                    unclosed = at  # no comment closes after here: each `<!--` costs one search, not one each
                    pos = at + 1
                else:
                    pos = close + 3
            else:
                # Every form ends with `>`, `<?` with `?>`, CDATA with `]]>`: when none is left in the paragraph, no
                # match is tried, so a paragraph full of `<?` costs one search, not a search to its end for each.
                if ends is None:
                    ends = (text.rfind(">", lo, hi), text.rfind("?>", lo, hi), text.rfind("]]>", lo, hi))
                if (
                    ends[0] <= at
                    or (ends[1] < at + 2 and text.startswith("<?", at))
                    or (ends[2] < at + 9 and text.startswith("<![CDATA[", at))
                ):
                    pos = at + 1
                    continue
                tag = _ANGLE.match(text, at, hi)
                pos = tag.end() if tag else at + 1
    return spans


# ---------------------------------------------------------------------------------------------------------------
# The answer


class CodeRegions:
    """Where a document's code is: `blocks` (fenced and indented code) and `spans` (inline code), sorted
    [start, end) offsets."""

    __slots__ = ("blocks", "spans", "_starts", "_ends")

    def __init__(self, blocks: list[Range], spans: list[Range]) -> None:
        self.blocks = blocks
        self.spans = spans
        both = sorted(blocks + spans)
        self._starts = [lo for lo, _ in both]
        self._ends = [hi for _, hi in both]

    def covers(self, pos: int) -> bool:
        """Whether the character at `pos` is code."""
        i = bisect_right(self._starts, pos) - 1
        return i >= 0 and pos < self._ends[i]


def code_regions(text: str, begin: int = 0) -> CodeRegions:
    """The code blocks and code spans of a Markdown document, read from `begin` (the end of its front matter)."""
    if (
        text.find("`", begin) < 0
        and text.find("~~~", begin) < 0
        and text.find("    ", begin) < 0
        and text.find("\t", begin) < 0
    ):
        return CodeRegions([], [])
    blocks = _Blocks(text)
    blocks.run(begin)
    return CodeRegions(blocks.blocks, _code_spans(text, blocks.inline))
