"""The lint's rules, as data (the ruff model): each has an id (`FR101`), a name, a one-line doc, its decision —
what it reports and what it leaves — and its examples: sentences it must report (with the text reported) and a
sentence of the same shape it must not. The policy page (docs/lint-rules.md), `factreg docs lint --explain ID`
and the policy tests (tests/test_lint_rules.py) are generated from them; the reading itself is in the family
modules of factreg.docs.lint (`durations.py`, `relative.py`, …), and each finding names the rule that made it.

The default set is what a review gate can trust: a rule whose precision on the `select` split of the labelled
real sentences was below 0.95 is a *preview* rule, run only with `--all` or `[lint] preview = true`
(docs/performance.md has the figures). `[lint] select` and `ignore` (and `--select`, `--ignore`) take ids or their
prefixes (`FR1`, `FR12`), as ruff does.
"""

from __future__ import annotations

from dataclasses import dataclass

# (what the example shows, a sentence the rule must report, the text it reports there, a sentence of the same
# shape it must not report)
Example = tuple[str, str, str, str]


@dataclass(frozen=True)
class Rule:
    """One rule of the lint."""

    id: str
    name: str
    doc: str  # one line: what it reports
    decision: str  # what it reads, and what it leaves (the policy)
    examples: tuple[Example, ...]
    kind: str = "claim"  # "claim": fails the lint; "target": listed with --targets, never fails
    preview: bool = False  # out of the default set: only with --all (or `[lint] preview = true`)


class UnknownRule(ValueError):
    """A rule id or prefix that names no rule."""


def all_rules() -> tuple[Rule, ...]:
    """Every rule, in id order (the family modules are imported on first use)."""
    if not _RULES:
        from factreg.docs.lint.rules import bare_durations, durations, rates, relative, tables, targets, units

        found = [*durations.RULES, *bare_durations.RULES, *rates.RULES, *relative.RULES, *units.RULES, *tables.RULES, *targets.RULES]
        _RULES.extend(sorted(found, key=lambda r: r.id))
    return tuple(_RULES)


_RULES: list[Rule] = []


def by_id(rule_id: str) -> Rule:
    """The rule with this id (case-insensitive); UnknownRule when there is none."""
    wanted = rule_id.strip().upper()
    for rule in all_rules():
        if rule.id == wanted:
            return rule
    raise UnknownRule(f"no lint rule {rule_id!r} (see `factreg docs lint --explain`)")


def _matching(code: str) -> list[str]:
    code = code.strip().upper()
    if code == "ALL":
        return [r.id for r in all_rules()]
    found = [r.id for r in all_rules() if r.id.startswith(code)] if code.startswith("FR") else []
    if not found:
        raise UnknownRule(f"no lint rule {code!r} (an id such as FR101, or a prefix such as FR1)")
    return found


def selected(
    select: list[str] | None = None, ignore: list[str] | None = None, preview: bool = False
) -> frozenset[str]:
    """The ids of the rules in force: `select` (ids or prefixes; none given: the default set, or every rule with
    `preview`), less `ignore`. A preview rule is in force only with `preview` or when selected by its full id.
    UnknownRule for a code that names no rule."""
    if select:
        chosen: set[str] = set()
        for code in select:
            ids = _matching(code)
            exact = len(ids) == 1 and ids[0] == code.strip().upper()
            chosen.update(i for i in ids if exact or preview or not by_id(i).preview)
    else:
        chosen = {r.id for r in all_rules() if preview or not r.preview}
    for code in ignore or []:
        chosen.difference_update(_matching(code))
    return frozenset(chosen)


def explain(rule: Rule) -> str:
    """What `docs lint --explain ID` prints: the rule's doc, decision and examples."""
    status = "preview (only with --all)" if rule.preview else "default"
    what = "a claim: fails the lint" if rule.kind == "claim" else "a target: listed with --targets, never fails"
    lines = [f"{rule.id} {rule.name}", "", rule.doc, "", f"Reports: {what}. Set: {status}.", "", rule.decision, ""]
    lines.append("Reported:" if rule.kind == "claim" else "Reported as a target:")
    lines.extend(f"  {claim}    → {reported}" for _, claim, reported, _ in rule.examples)
    lines += ["", "Not reported:"]
    lines.extend(f"  {other}" for _, _, _, other in rule.examples)
    return "\n".join(lines) + "\n"


def page() -> str:
    """docs/lint-rules.md: every rule with its doc, decision and examples (generated; a test keeps it current)."""
    out = [
        "# docs lint rules",
        "",
        "Generated from `factreg/docs/lint/rules/` by `python -m factreg.docs.lint.rules > docs/lint-rules.md`; do not",
        "edit by hand. `factreg docs lint --explain ID` prints one rule. Silence one rule on a line with",
        "`<!-- factreg: ignore[FR101] -->` (and `ignore-next-line[…]`, `ignore-start[…]` … `ignore-end`,",
        "`ignore-file[…]`); choose rules with `[lint] select`, `ignore` and `preview = true` in `.factreg/config.toml`",
        "or `--select`, `--ignore`, `--all`.",
        "",
        "| id | name | reports | set |",
        "|---|---|---|---|",
    ]
    for r in all_rules():
        out.append(f"| {r.id} | {r.name} | {r.doc} | {'preview' if r.preview else 'default'} |")
    for r in all_rules():
        out += ["", f"## {r.id} {r.name}", "", r.doc, "", r.decision, "", "| example | reported | not reported |"]
        out.append("|---|---|---|")
        for case, claim, reported, other in r.examples:
            out.append(f"| {_cell(case)}: {_cell(claim)} | {_cell(reported)} | {_cell(other)} |")
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'").replace("\n", " ⏎ ") + "`"
