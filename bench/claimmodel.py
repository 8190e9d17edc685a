"""A learned second opinion on the lint's rules (an experiment, not adopted: kept here beside its training script,
outside the package): a logistic regression over the words of a sentence that holds a number with a unit, trained
on the real-sentence corpus (tests/data/claims-real) by bench/train_claims.py, which also measures it.

The rules in factreg.docs.lint find every number with a unit and say which are claims, which are targets and which
are neither ("dismissed"). This module reads, for each sentence holding at least one of them (and only those), the
words of the sentence, the words right before and after each number, its unit and what the rules made of it, and
gives the probability that the sentence holds a claim. Then, in this module's `lint_text(text, M)`:

- **veto**: when the rules found claims in a sentence and the probability is below the model's `veto` threshold,
  those findings become kind "vetoed" (listed only with `targets=True`, as targets are; they never fail the lint);
- **add**: when the rules found no claim in a sentence and the probability is above its `add` threshold, the
  sentence's first number the rules called a target or dismissed becomes a claim.

Either way the finding's `by` is "model" (the rules' own findings say "rules"), so a reader can tell who decided.
A sentence is a line, or a part of a line ended by `.`, `!` or `?` and a space (a table row is one sentence).
Features are strings (`w:latency`, `L1:took`, `u:claim:ms`, `n:dismissed:1`, …); digits read as `0`, letters
lower-cased. Nothing here reads the clock, the network or the corpus.

Why it is not used (docs/performance.md, "A learned second opinion"): chosen by leave-one-batch-out over three
batches and scored once on a fourth, it changed one Korean sentence of 463 and nothing in English; it did not beat
the rules in both languages.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from factreg.docs.findings import Finding
from factreg.docs.lint import engine
from factreg.docs.lint.vocab import TARGET_RULE

MODEL_RULE = "FR901"  # a claim only the model found

# start, end, value, unit, kind ("claim", "target", "vetoed", "dismissed"), by ("rules" or "model")
Decided = tuple[int, int, str, str, str, str]
Candidate = tuple[int, int, str, str, str]

_TOKEN = re.compile(r"[a-z]+|[\uac00-\ud7a3]+|\d+(?:[.,]\d+)*|[^\sa-z\uac00-\ud7a3\d]")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
# Where a sentence ends inside a line: `.`, `!`, `?` or `。` and a space, not after a one-letter abbreviation part
# (`e.g.`, `i.e.`) nor `vs.`.
_STOP = re.compile(r"(?<![.\s][a-z])(?<!\bvs)[.!?。]+[\s]+(?=\S)")


@dataclass(frozen=True)
class Model:
    weights: dict[str, float]
    bias: float
    veto: float  # veto the rules' claims in a sentence below this probability
    add: float  # add a claim to a sentence without one above this probability
    about: str = ""

    def probability(self, feats: list[str]) -> float:
        z = self.bias
        w = self.weights
        for f in feats:
            z += w.get(f, 0.0)
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)


def load(path: Path) -> Model:
    """A model written by bench/train_claims.py (`--write PATH`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return Model(
        {str(k): float(v) for k, v in data["weights"].items()},
        float(data["bias"]),
        float(data["veto"]),
        float(data["add"]),
        str(data.get("about", "")),
    )


def sentences(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The sentences of the line text[lo:hi]: a table row is one, prose is split after `.`, `!` or `?` and a
    space."""
    if text[lo:hi].lstrip().startswith("|"):
        return [(lo, hi)]
    out: list[tuple[int, int]] = []
    a = lo
    for m in _STOP.finditer(text, lo, hi):
        out.append((a, m.end()))
        a = m.end()
    out.append((a, hi))
    return out


def tokens(s: str) -> list[str]:
    """The words of `s` as the features read them: lower-cased, digits as `0`."""
    return ["0" if t[0].isdigit() else t for t in _TOKEN.findall(s.lower())]


def features(text: str, lo: int, hi: int, cands: list[Candidate]) -> list[str]:
    """The features of the sentence text[lo:hi] holding `cands` (the rules' claims, targets and dismissed numbers
    in it, with offsets in `text`)."""
    sent = text[lo:hi]
    toks = tokens(sent)
    feats = ["lang:ko" if _HANGUL.search(sent) else "lang:en"]
    if sent.lstrip().startswith("|"):
        feats.append("row")
    kinds = {"claim": 0, "target": 0, "dismissed": 0}
    for c in cands:
        kinds[c[4]] = kinds.get(c[4], 0) + 1
        feats.append(f"u:{c[4]}:{c[3]}")
        feats.append(f"u:any:{c[3]}")
    for k, n in kinds.items():
        feats.append(f"n:{k}:{min(n, 2)}")
    seen: set[str] = set()
    for t in toks:
        seen.add("w:" + t)
        if len(t) > 1 and _HANGUL.match(t):
            seen.add("ks:" + t[-2:])
            seen.add("kp:" + t[:2])
            seen.add("ke:" + t[-1])
    for a, b in zip(toks, toks[1:], strict=False):
        seen.add(f"b:{a} {b}")
    for c in cands:
        before = tokens(text[max(lo, c[0] - 40) : c[0]])[-3:]
        after = tokens(text[c[1] : min(hi, c[1] + 40)])[:3]
        for i, t in enumerate(reversed(before), 1):
            seen.add(f"L{i}:{t}")
            seen.add(f"Lw:{t}")
        for i, t in enumerate(after, 1):
            seen.add(f"R{i}:{t}")
            seen.add(f"Rw:{t}")
        if before:
            seen.add(f"L1u:{before[-1]}|{c[3]}")
        if after:
            seen.add(f"R1u:{c[3]}|{after[0]}")
    feats.extend(sorted(seen))
    return feats


def _line_bounds(text: str, pos: int) -> tuple[int, int]:
    lo = text.rfind("\n", 0, pos) + 1
    hi = text.find("\n", pos)
    return lo, len(text) if hi < 0 else hi


def groups(text: str, found: list[Candidate], dismissed: list[Candidate]) -> list[tuple[int, int, list[Candidate]]]:
    """(start, end, candidates) of each sentence holding a candidate, in order."""
    every = sorted(found + dismissed)
    out: list[tuple[int, int, list[Candidate]]] = []
    lines: dict[int, list[tuple[int, int]]] = {}
    for c in every:
        lo, hi = _line_bounds(text, c[0])
        if lo not in lines:
            lines[lo] = sentences(text, lo, hi)
        for a, b in lines[lo]:
            if a <= c[0] < b:
                break
        if out and out[-1][0] == a and out[-1][1] == b:
            out[-1][2].append(c)
        else:
            out.append((a, b, [c]))
    return out


def decide(text: str, found: list[Candidate], dismissed: list[Candidate], model: Model) -> list[Decided]:
    """The rules' findings (`found`: claims and targets) with the model's vetoes and additions, in order."""
    out: list[Decided] = []
    for lo, hi, cands in groups(text, found, dismissed):
        claims = [c for c in cands if c[4] == "claim"]
        if claims:
            p = model.probability(features(text, lo, hi, cands))
            if p < model.veto:
                out.extend(
                    (*c[:4], "vetoed", "model") if c[4] == "claim" else (*c, "rules")
                    for c in cands
                    if c[4] != "dismissed"
                )
                continue
        else:
            p = model.probability(features(text, lo, hi, cands))
            if p > model.add:
                first = cands[0]
                out.append((*first[:4], "claim", "model"))
                out.extend((*c, "rules") for c in cands[1:] if c[4] != "dismissed")
                continue
        out.extend((*c, "rules") for c in cands if c[4] != "dismissed")
    out.sort()
    return out


def lint_text(
    text: str,
    model: Model,
    path: str = "<text>",
    include_code: bool = False,
    targets: bool = False,
    rules: frozenset[str] | None = None,
) -> list[Finding]:
    """The lint's findings with the model's second opinion: `factreg.docs.lint.lint_text`, where the model may veto
    the rules' claims in a sentence (kind "vetoed", listed with `targets`) or add one (rule `MODEL_RULE`); such
    findings have `by == "model"`."""
    dismissed: list[engine.Candidate] = []
    found = engine._scan(text, include_code, True, dismissed)
    rule_at = {c[0]: c[5] for c in found}
    decided = [
        (s, e, v, u, k, by, TARGET_RULE if k == "target" else rule_at.get(s, MODEL_RULE))
        for s, e, v, u, k, by in decide(text, [c[:5] for c in found], [c[:5] for c in dismissed], model)
    ]
    return engine._findings(text, path, decided, targets, rules)
