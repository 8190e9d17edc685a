"""`verify --notify`: one message per run listing what changed since the last message, with the commands to act.

A fact is worth a message when its status has become refuted, shifted, stale, conditions_changed or unverifiable,
or it is repeatedly inconclusive (REPEATED unresolved verdicts of its current version), and a decision when it
`needs review` — compared with the state the last message reported (`registry/outbox.py`), so staleness comes from
time, not from the run. A subject back to normal is forgotten silently (a relapse is news again). No message when
nothing changed, unless `always`.

The message goes to every notifier configured as a `[notify.NAME]` table (built-ins `webhook`, `smtp`, `command`,
or a plugin's): queued in the outbox together with the states it reports, then delivered; what cannot be
delivered stays queued and is retried by the next run. Delivery never raises: each failure is one line in the
outcome, so a failing notifier changes neither the run's exit code nor its records. Everything a message holds is
redacted (`secrets.redact`) before it is queued.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from factreg import secrets
from factreg.errors import ConfigError
from factreg.plugins import Message

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.store import Registry

ALERT_STATUSES = ("refuted", "shifted", "stale", "conditions_changed", "unverifiable")
INCONCLUSIVE = "inconclusive"
NEEDS_REVIEW = "needs review"
REPEATED = 2  # unresolved inconclusive verdicts in a row that make a fact worth a message


@dataclass(frozen=True)
class Change:
    """A subject whose alert state changed since the last message: what it is now, was, why, and what to run."""

    subject: str  # fact:ID or decision:N
    name: str
    state: str
    was: str | None
    reason: str
    act: str

    def as_data(self) -> dict[str, Any]:
        return {"subject": self.subject, "name": self.name, "state": self.state, "was": self.was,
                "reason": self.reason, "act": self.act}


@dataclass
class Outcome:
    """What a notify run did: the changes it reported, the messages delivered, the failures (one line each), and
    how many messages are still queued."""

    changes: list[Change] = field(default_factory=list)
    queued: bool = False
    delivered: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    pending: int = 0

    def lines(self) -> list[str]:
        """What to tell the user, on stderr."""
        out = []
        if self.queued:
            out.append(f"notify: {len(self.changes)} change(s) since the last message" if self.changes
                       else "notify: nothing changed since the last message (sent anyway: --notify-always)")
        elif not self.failures:
            out.append("notify: nothing changed since the last message; nothing sent")
        if self.delivered:
            out.append(f"notify: delivered {len(self.delivered)} message(s): {', '.join(self.delivered)}")
        out += [f"notify: {f}" for f in self.failures]
        if self.pending:
            out.append(f"notify: {self.pending} message(s) kept in the outbox, retried by the next run")
        return out


def channels(settings: Settings) -> dict[str, Mapping[str, Any]]:
    """The configured notifiers, `[notify.NAME]` tables; ConfigError when there are none."""
    table = settings.get("notify")
    found: dict[str, Mapping[str, Any]] = (
        {str(k): v for k, v in table.items() if isinstance(v, dict)} if isinstance(table, dict) else {})
    if not found:
        where = settings.config_path or ".factreg/config.toml"
        raise ConfigError(f"--notify needs a notifier in {where}: a [notify.webhook] (url or url_env), "
                          "[notify.smtp] or [notify.command] table (docs/alerts.md)")
    return found


def _act_on_fact(row: Mapping[str, Any], state: str) -> str:
    from factreg.publish.report import what_to_do

    if state == INCONCLUSIVE:
        return f"measure it with more samples: `factreg verify {row['id']} --n 20` (`factreg history {row['id']}`)"
    last = {"pk": row["verification"]} if row.get("verification") is not None else None
    return what_to_do(cast(Any, row), cast(Any, last))


def current(registry: Registry, settings: Settings) -> dict[str, Change]:
    """Every subject in an alert state now (its `was` left empty)."""
    from factreg.publish import decisions
    from factreg.registry import status

    rows = status.statuses(registry, settings.file_config)
    out: dict[str, Change] = {}
    for row in rows:
        state = row["status"] if row["status"] in ALERT_STATUSES else (
            INCONCLUSIVE if int(row.get("inconclusive_since_confirmed") or 0) >= REPEATED else None)
        if state is None:
            continue
        reason = row["status_reason"] if state != INCONCLUSIVE else (
            f"{row.get('inconclusive_since_confirmed')} inconclusive verdicts in a row")
        out[f"fact:{row['id']}"] = Change(f"fact:{row['id']}", row["id"], state, None, str(reason),
                                          _act_on_fact(cast(Mapping[str, Any], row), state))
    for d in decisions.needing_review(registry, settings.file_config, statuses=rows):
        subject = f"decision:{d['number']}"
        out[subject] = Change(subject, f"decision {d['number']} ({d['title']})", NEEDS_REVIEW, None,
                              "; ".join(d["review_reasons"]) or "a cited fact changed",
                              f"review it: `factreg decision show {d['number']}`")
    return out


def message(changes: Sequence[Change], hostname: str) -> Message:
    """The one message of a run, redacted."""
    if changes:
        counts: dict[str, int] = {}
        for c in changes:
            counts[c.state] = counts.get(c.state, 0) + 1
        subject = (f"factreg on {hostname}: {len(changes)} change(s) — "
                   + ", ".join(f"{n} {state}" for state, n in sorted(counts.items())))
        body = [subject, ""]
        for c in changes:
            body.append(f"- {c.name}: {c.state}" + (f" (was {c.was})" if c.was else "") + f" — {c.reason}")
            body.append(f"  to act: {c.act}")
    else:
        subject = f"factreg on {hostname}: nothing changed since the last message"
        body = [subject]
    return Message(secrets.redact(subject), secrets.redact("\n".join(body) + "\n"),
                   tuple(secrets.redact_data(c.as_data()) for c in changes))


def run(registry: Registry, settings: Settings, *, always: bool = False) -> Outcome:
    """Report what changed since the last message to every configured notifier, and retry what was not
    delivered before; never raises for a notifier's failure."""
    from factreg.registry import outbox

    configured = channels(settings)
    outcome = Outcome()
    now = current(registry, settings)
    before = outbox.reported(registry)
    outcome.changes = [Change(s, c.name, c.state, before.get(s), c.reason, c.act)
                       for s, c in sorted(now.items()) if before.get(s) != c.state]
    states: dict[str, str | None] = {c.subject: c.state for c in outcome.changes}
    states.update({s: None for s in before if s not in now})  # back to normal: forgotten, a relapse is news
    queue: list[tuple[str, str, str]] = []
    if outcome.changes or always:
        msg = message(outcome.changes, settings.hostname)
        body = json.dumps({"subject": msg.subject, "text": msg.text, "changes": list(msg.changes)})
        queue = [(name, msg.subject, body) for name in configured]
        outcome.queued = True
    if states or queue:
        outbox.note(registry, states, queue)
    _deliver(registry, settings, configured, outcome)
    return outcome


def _deliver(registry: Registry, settings: Settings, configured: Mapping[str, Mapping[str, Any]],
             outcome: Outcome) -> None:
    from factreg import plugins
    from factreg.registry import outbox

    for item in outbox.pending(registry):
        spec = plugins.notifier(item.notifier)
        options = configured.get(item.notifier)
        try:
            if spec is None or options is None:
                raise ConfigError(f"no notifier {item.notifier!r} is installed and configured ([notify."
                                  f"{item.notifier}]; `factreg plugins` lists the notifiers)")
            data = json.loads(item.body)
            plugins.load(spec.send)(Message(data["subject"], data["text"], tuple(data.get("changes") or ())),
                                    options, settings)
        except Exception as exc:  # noqa: BLE001 - a notifier's failure is reported, never raised
            why = secrets.redact(" ".join(str(getattr(exc, "message", "") or exc).split())[:300] or
                                 type(exc).__name__)
            outbox.failed(registry, item.pk, why)
            outcome.failures.append(f"{item.notifier} failed: {why}")
            outcome.pending += 1
            continue
        outbox.delivered(registry, item.pk)
        outcome.delivered.append(item.notifier)
