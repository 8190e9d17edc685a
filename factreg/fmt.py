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
        decimals = len(text.split(".")[1]) if "." in text else 0
        text += f" ± {spread:.{decimals}f}"
    if unit and unit != "bool":
        text += f" {unit}" if unit not in ("×", "%") else unit
    return text
