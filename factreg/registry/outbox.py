"""Alerts' memory in the registry: the state of each fact (`fact:ID`) and decision (`decision:N`) as the last
message reported it, and the messages a notifier has not delivered yet (the outbox, retried by the next run).

What is worth a message, and sending it, live in `notify/`; this module only keeps the rows. A state and the
message that reports it are written in one transaction: a change is never both forgotten and unsent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factreg import clock
from factreg.registry.store import rows

if TYPE_CHECKING:
    from factreg.registry.store import Registry


@dataclass(frozen=True)
class Pending:
    """A message one notifier has not delivered: its row, what it says (JSON text) and how often it was tried."""

    pk: int
    notifier: str
    created_at: str
    subject: str
    body: str
    attempts: int
    last_error: str | None


def reported(registry: Registry) -> dict[str, str]:
    """Subject → the state the last message reported."""
    with registry.read() as conn:
        return {r["subject"]: r["state"] for r in rows(conn, "SELECT subject, state FROM notified")}


def note(registry: Registry, states: Mapping[str, str | None], messages: Sequence[tuple[str, str, str]]) -> None:
    """In one transaction: each subject's reported state (None: nothing to report any more, the row goes) and the
    messages to deliver, (notifier, subject, body) each."""
    from sqlalchemy import text

    now = clock.iso()

    def work(conn: Any) -> None:
        for subject, state in states.items():
            conn.execute(text("DELETE FROM notified WHERE subject = :s"), {"s": subject})
            if state is not None:
                conn.execute(text("INSERT INTO notified (subject, state, noted_at) VALUES (:s, :t, :n)"),
                             {"s": subject, "t": state, "n": now})
        for notifier, subject, body in messages:
            conn.execute(text("INSERT INTO outbox (notifier, created_at, subject, body, attempts) "
                              "VALUES (:r, :c, :s, :b, 0)"), {"r": notifier, "c": now, "s": subject, "b": body})

    registry.write_retrying(work)


def pending(registry: Registry) -> list[Pending]:
    """The undelivered messages, oldest first."""
    with registry.read() as conn:
        return [Pending(**r) for r in rows(conn, "SELECT pk, notifier, created_at, subject, body, attempts, "
                                                 "last_error FROM outbox ORDER BY pk")]


def delivered(registry: Registry, pk: int) -> None:
    """A message was delivered: it leaves the outbox."""
    from sqlalchemy import text

    registry.write_retrying(lambda conn: conn.execute(text("DELETE FROM outbox WHERE pk = :p"), {"p": pk}))


def failed(registry: Registry, pk: int, error: str) -> None:
    """A delivery failed: the message stays, with one more attempt and why (secrets already redacted)."""
    from sqlalchemy import text

    registry.write_retrying(lambda conn: conn.execute(
        text("UPDATE outbox SET attempts = attempts + 1, last_error = :e WHERE pk = :p"), {"e": error[:500], "p": pk}))
