"""The words a note writes itself, in the note's language: English format strings, and their Korean from the message
catalogue `corrections.ko.json` beside the `*.ko.md.j2` templates (`sentences`: English → Korean; `evidence`: the
glue words of the evidence a note quotes, replaced in order — ids, numbers and messages stay as they are)."""

from __future__ import annotations

import functools
import json
from typing import Any

CATALOGUE = "corrections.{lang}.json"


@functools.lru_cache(maxsize=4)
def catalogue(lang: str) -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    """(sentences, evidence pairs) of `lang` from the shipped templates ({} and () for English)."""
    if lang == "en":
        return {}, ()
    from factreg.publish import render

    data = json.loads((render.default_dir() / CATALOGUE.format(lang=lang)).read_text(encoding="utf-8"))
    return dict(data["sentences"]), tuple((str(en), str(other)) for en, other in data["evidence"])


def say(lang: str, text: str, **kw: Any) -> str:
    """`text` (a format string) in `lang`, filled with `kw`."""
    chosen = catalogue(lang)[0].get(text, text) if lang != "en" else text
    return chosen.format(**kw) if kw else chosen


def say_evidence(lang: str, text: str) -> str:
    """Evidence in `lang`: its glue words in the catalogue's language."""
    if lang == "en":
        return text
    for en, other in catalogue(lang)[1]:
        text = text.replace(en, other)
    return text
