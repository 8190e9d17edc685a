"""What reaches a terminal: text from the network, the registry or a file name, with nothing a terminal would obey.

A server's error body, a model name in the registry or a document's file name can hold control characters: an
escape sequence (`ESC [ 31 m`, an OSC title or hyperlink), a carriage return that overwrites the line before it, a
bidirectional override that reorders what people read, or bytes that are not UTF-8 (a file name, kept by Python as
lone surrogates). `visible` writes each of them as the escape a reader recognises (`\\x1b`, `\\r`, `\\u202e`,
`\\xff` for the byte 0xFF of a file name) and leaves every other character as it is (Korean, emoji, `±`). It is the
one rule for every line factreg prints: `Error:` lines (`cli/common.print_error`, the CLI's last resort), the lines
for people on stderr, data lines and tables (`cli/common.py`). A file factreg writes (a report page, a note) gets
a name that is not UTF-8 as `\\xNN` text (`without_surrogates`) and as a percent-encoded link (`link`).
"""

from __future__ import annotations

import functools
import re

# C0 controls and DEL, C1 controls (U+009B is a one-character CSI on some terminals), the bidirectional embeddings,
# overrides and isolates, and lone surrogates (bytes of a file name that are not UTF-8, `os.fsdecode`).
_INVISIBLE_CHARS = "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


@functools.cache
def _invisible() -> re.Pattern[str]:
    """Compiled on first use: a command that prints no untrusted text never pays for it."""
    return re.compile(_INVISIBLE_CHARS)
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= code <= 0xDCFF:  # a byte 0x80–0xFF of a name that is not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def visible(text: str, keep: str = "\n\t") -> str:
    """`text` with every control character, bidirectional control and lone surrogate written as its escape;
    the characters in `keep` (line breaks and tabs, by default) stay as they are."""
    if not _invisible().search(text):
        return text
    return _invisible().sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """`text` with only its lone surrogates (a file name's bytes that are not UTF-8) written as `\\xNN`: text
    that can be encoded as UTF-8, for a file factreg writes; every other character as it is."""
    return _SURROGATE.sub(lambda m: _escape(m.group()), text) if _SURROGATE.search(text) else text


def link(path: str) -> str:
    """A relative path as a link target: as it is when it is UTF-8, else its bytes percent-encoded (`bad%FF.md`),
    which is where a browser or GitHub finds the file."""
    if is_utf8_name(path):
        return path
    from urllib.parse import quote

    return quote(path.encode("utf-8", "surrogateescape"), safe="/")


def name(path: object) -> str:
    """A path as shown to people: its text, with the bytes of a name that are not UTF-8 as `\\xNN`."""
    return visible(str(path), keep="")


def is_utf8_name(path: object) -> bool:
    """Whether a path's name is valid UTF-8 text (Python keeps other bytes as lone surrogates)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
