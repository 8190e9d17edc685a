"""Regular expressions compiled on their first use: importing the lint compiles nothing (a command that never
lints pays nothing for its ~180 patterns), and a pattern's first `search` compiles it and puts the compiled
pattern's own methods in its place, so every later call costs what a compiled pattern's call costs."""

from __future__ import annotations

import re
from typing import Any, cast

from factreg.docs import literals

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "split")


class Lazy:
    """A pattern's text and flags; compiled by the first call of any of its methods."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._screened = False
        self._rx: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if it was not yet); its methods replace this object's."""
        rx = self._rx
        if rx is None:
            rx = self._rx = re.compile(self.pattern, self._flags)
            # a pre-tested search (factreg.docs.literals) when screened: the same matches
            screened = literals.screened(rx) if self._screened else rx
            for name in _METHODS:
                setattr(self, name, getattr(screened if name == "search" else rx, name))
        return rx

    @property
    def declared_flags(self) -> int:
        """The flags given with the pattern (without its inline ones): known without compiling it."""
        return self._flags

    @property
    def flags(self) -> int:
        return self.compiled().flags

    @property
    def groupindex(self) -> Any:
        return self.compiled().groupindex

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.compiled()
        return self.search(*args, **kwargs)

    def match(self, *args: Any, **kwargs: Any) -> Any:
        self.compiled()
        return self.match(*args, **kwargs)

    def fullmatch(self, *args: Any, **kwargs: Any) -> Any:
        self.compiled()
        return self.fullmatch(*args, **kwargs)

    def finditer(self, *args: Any, **kwargs: Any) -> Any:
        self.compiled()
        return self.finditer(*args, **kwargs)

    def findall(self, *args: Any, **kwargs: Any) -> Any:
        self.compiled()
        return self.findall(*args, **kwargs)

    def sub(self, *args: Any, **kwargs: Any) -> Any:
        self.compiled()
        return self.sub(*args, **kwargs)

    def split(self, *args: Any, **kwargs: Any) -> Any:
        self.compiled()
        return self.split(*args, **kwargs)


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled on first use, typed as the compiled pattern it stands for."""
    return cast(re.Pattern[str], Lazy(pattern, flags))


def screened(rx: re.Pattern[str]) -> re.Pattern[str]:
    """`rx` (a lazy pattern) whose `search` is pre-tested for its literals once it is compiled."""
    cast(Lazy, rx)._screened = True
    return rx


def compiled(rx: re.Pattern[str]) -> re.Pattern[str]:
    """The compiled pattern behind a lazy one (what `literals.screen` parses and what a match's `re` is)."""
    return cast(Lazy, rx).compiled() if isinstance(rx, Lazy) else rx
