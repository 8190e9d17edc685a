"""A fast, exact pre-test for regular expressions: the literal strings one of which every match contains.

`screen(rx)` reads a compiled pattern's syntax tree and returns a `Screen`, whose `may_match(folded)` is False only
when `rx` cannot match anywhere in the text that `fold` turned into `folded`: every match of `rx` holds one of the
pattern's required literals, folded the same way. Python's `re` tries a case-insensitive alternation of words at
every position of a text (no literal prefix to skip to); a few `str` searches for its literals are several times
cheaper, and most lines of prose hold none of them. When the tree has nothing that every match must contain (a
character class, an optional part, an assertion), `may_match` is always True and the pattern is searched as before.

Folding: ASCII capitals to small letters, and the four other characters Python's `re` matches with an ASCII letter
when ignoring case (`İ`, `ı` with `i`, `ſ` with `s`, the Kelvin sign with `k`; tests/test_lint_speed_equivalence.py
checks this list against every code point). A literal matched ignoring case that is a cased non-ASCII character
(`µ`, `É`) ends a run of literals instead, as other characters may match it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any, cast

try:  # Python 3.11+
    from re import _constants as _c  # type: ignore[attr-defined]  # re's private modules: not in typeshed
    from re import _parser as _p  # type: ignore[attr-defined]  # re's private modules: not in typeshed
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c
    import sre_parse as _p

# False: no pre-test anywhere (the reference the pre-tests are tested against, tests/test_lint_speed_equivalence.py).
ENABLED = True

# Characters other than a–z that `re` matches with an ASCII letter when ignoring case, and that letter.
FOLD_EXTRA = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_FOLD = {ord(c): c.lower() for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"} | {ord(k): v for k, v in FOLD_EXTRA.items()}


def fold(text: str) -> str:
    """`text` with every character that may match an ASCII letter ignoring case made that small letter (the same
    length: offsets are kept)."""
    return text.lower() if text.isascii() else text.translate(_FOLD)


def _fold_char(ch: str, icase: bool) -> str | None:
    """How a literal of the pattern appears in a folded text, or None when other characters may match it."""
    if icase and not ch.isascii() and ch not in FOLD_EXTRA and (ch.lower() != ch or ch.upper() != ch):
        return None
    return fold(ch)


@dataclass(frozen=True)
class Screen:
    """The literals one of which every match holds (folded), or None: no pre-test; and every such set (`groups`:
    a match holds one literal of each)."""

    needs: tuple[str, ...] | None
    groups: tuple[tuple[str, ...], ...] = ()

    def may_match_all(self, folded: str) -> bool:
        """Whether `folded` holds a literal of every group (a stronger test than may_match, for longer texts)."""
        for group in self.groups:
            for s in group:
                if s in folded:
                    break
            else:
                return False
        return True

    def may_match(self, folded: str) -> bool:
        needs = self.needs
        if needs is None:
            return True
        for s in needs:  # noqa: SIM110 - a loop is faster than any() over a generator, on every line
            if s in folded:
                return True
        return False


def _required(items: Any, icase: bool) -> frozenset[str] | None:
    """The best set of literals one of which every match of this sequence of the parse tree holds, or None."""
    options = _options(items, icase)
    if not options:
        return None
    # the rarest set: the longest shortest literal, then the fewest literals
    return max(options, key=lambda s: (min(map(len, s)), -len(s)))


def _options(items: Any, icase: bool) -> list[frozenset[str]]:
    """Every set of literals one of which every match of this sequence holds (each set must be met)."""
    options: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            options.append(frozenset({"".join(run)}))
            run.clear()

    for op, av in items:
        if op is _c.LITERAL:
            folded = _fold_char(chr(av), icase)
            if folded is None:
                flush()
            else:
                run.append(folded)
            continue
        flush()
        found: frozenset[str] | None = None
        if op is _c.SUBPATTERN:
            _group, add, delete, sub = av
            sub_icase = (icase or bool(add & _c.SRE_FLAG_IGNORECASE)) and not delete & _c.SRE_FLAG_IGNORECASE
            found = _required(sub, sub_icase)
        elif op is _c.BRANCH:
            found = _union([_required(alt, icase) for alt in av[1]])
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[0] >= 1:
            found = _required(av[2], icase)
        elif op is _c.IN:
            found = _in_set(av, icase)
        if found:
            options.append(found)
    flush()
    return options


def _union(sets: list[frozenset[str] | None]) -> frozenset[str] | None:
    out: set[str] = set()
    for s in sets:
        if not s:
            return None
        out |= s
    return frozenset(out)


def _in_set(av: Any, icase: bool) -> frozenset[str] | None:
    """A class of a few single characters (`[\"“]`): each of them, folded."""
    out: set[str] = set()
    for op, value in av:
        if op is not _c.LITERAL:
            return None
        folded = _fold_char(chr(value), icase)
        if folded is None:
            return None
        out.add(folded)
    return frozenset(out) if out else None


def screen(rx: re.Pattern[str]) -> Screen:
    """The pre-test of a compiled pattern (no pre-test when its tree cannot be read)."""
    # A lazy pattern (factreg.docs.lint.patterns) gives the flags it was written with, so that working out its
    # pre-test does not compile it; the parsed tree's flags are the compiled pattern's (inline flags included).
    declared = getattr(rx, "declared_flags", None)
    try:
        tree = _p.parse(rx.pattern, (rx.flags if declared is None else declared) & ~re.UNICODE)
        options = _options(list(tree), bool(tree.state.flags & re.IGNORECASE))
    except Exception:  # pragma: no cover - a syntax tree of another Python version: no pre-test, still exact
        options = []
    if not options:
        return Screen(None)
    best = max(options, key=lambda s: (min(map(len, s)), -len(s)))
    return Screen(_shortest(best), tuple(dict.fromkeys(_shortest(o) for o in options)))


def _shortest(found: frozenset[str]) -> tuple[str, ...]:
    """A literal that holds another one is implied by it: keep the shorter, fewer searches."""
    needs: list[str] = []
    for s in sorted(found, key=lambda s: (len(s), s)):
        if not any(n in s for n in needs):
            needs.append(s)
    return tuple(needs)


_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")


class Screened:
    """A compiled pattern whose `search` first looks for one of the literals every match holds (in the searched
    part of the text only); its other methods are the pattern's. For patterns searched over a short window around
    each number, where most windows hold none of the literals."""

    def __init__(self, rx: re.Pattern[str]) -> None:
        self.rx = rx
        needs = screen(rx).needs
        # literals without a–z read the same in the text as in its folded form: searched in place, no copy
        self.raw = needs if needs is not None and not any(_LETTERS & set(n) for n in needs) else None
        self.needs = needs if self.raw is None else None

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        if ENABLED:
            if self.raw is not None:
                find = string.find
                for s in self.raw:
                    if find(s, pos, endpos) >= 0:
                        break
                else:
                    return None
            elif self.needs is not None:
                part = fold(string[pos:endpos] if pos or endpos < len(string) else string)
                for s in self.needs:
                    if s in part:
                        break
                else:
                    return None
        return self.rx.search(string, pos, endpos)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rx, name)


def screened(rx: re.Pattern[str]) -> re.Pattern[str]:
    """`rx` with a pre-tested `search` (the same matches), or `rx` itself when it has no literal to look for."""
    if screen(rx).needs is None:
        return rx
    return cast(re.Pattern[str], Screened(rx))
