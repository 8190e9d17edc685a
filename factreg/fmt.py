"""How numbers are written for people: significant digits, spreads, units."""

from __future__ import annotations

import math


def num(x: float | None, digits: int = 3) -> str:
    """`x` with `digits` significant digits, without exponent for everyday magnitudes."""
    if x is None:
        return "—"
    if x == 0 or not math.isfinite(x):
        return str(x if not float(x).is_integer() else int(x))
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - magnitude)
    return f"{x:.{decimals}f}"


def value(v: float | None, spread: float | None = None, unit: str | None = None, digits: int = 3) -> str:
    """`11.9 ± 7.2 tok/s`: the spread is written with as many decimals as the value."""
    if v is None:
        return "—"
    text = num(v, digits)
    if spread is not None:
        text += f" ± {alongside(text, spread)}"
    return with_unit(text, unit)


def alongside(shown: str, x: float) -> str:
    """`x` with as many decimals as the number `shown` (a spread written next to its value)."""
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return f"{x:.{decimals}f}"


def with_unit(text: str, unit: str | None) -> str:
    """`11.9 tok/s`, `3.1×`, `82%`; a bool's unit is not written."""
    if unit and unit != "bool":
        text += f" {unit}" if unit not in ("×", "%") else unit
    return text
