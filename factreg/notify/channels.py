"""The built-in notifiers (registered in `plugins/builtins.py`): a webhook, e-mail over SMTP, a command.

Each is `send(message, options, settings)`, `options` its `[notify.NAME]` table, and raises on failure (the
caller, `alerts.py`, keeps the message in the outbox and reports the failure in one line). Credentials come from
the environment by name only, as probe headers do: `url_env`, `headers` values of `${VAR}` form (the variables
named in `allow_env`), `username_env`, `password_env`. Nothing here runs a shell: the command is an argument list.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from factreg import secrets
from factreg.errors import ConfigError
from factreg.plugins import Message

if TYPE_CHECKING:
    from factreg.config import Settings

DEFAULT_TIMEOUT_S = 30.0


def _timeout(options: Mapping[str, Any]) -> float:
    value = options.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 600:
        raise ConfigError("[notify.*] timeout_s must be a number of seconds from 0 to 600")
    return float(value)


def _env(name: Any, what: str) -> str:
    """The value of the environment variable a setting names (never the value itself in the config)."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{what} must name an environment variable")
    secrets.check_env_name(name, what)
    value = os.environ.get(name)
    if not value:
        raise ConfigError(f"{what}: the environment variable {name} is not set")
    secrets.remember(value)  # masked wherever it could appear (an error message quoting the URL)
    return value


def webhook(message: Message, options: Mapping[str, Any], settings: Settings | None = None) -> None:
    """POST JSON: `text` (what Slack's and Mattermost's incoming webhooks show), `subject` and `changes`."""
    from factreg.measure.http import make_client

    url = _env(options["url_env"], "[notify.webhook] url_env") if "url_env" in options else options.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError("[notify.webhook] needs url (http:// or https://) or url_env (a variable holding it)")
    raw = options.get("headers") or {}
    if not isinstance(raw, Mapping):
        raise ConfigError("[notify.webhook] headers must be a table of name = value")
    allow = options.get("allow_env") or []
    if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
        raise ConfigError("[notify.webhook] allow_env must be a list of variable names")
    headers = secrets.expand_headers({str(k): str(v) for k, v in raw.items()}, allowed=frozenset(allow))
    payload = {"text": message.text, "subject": message.subject, "changes": list(message.changes)}
    with make_client(_timeout(options)) as client:
        reply = client.post(url, json=payload, headers={**headers, "Content-Type": "application/json"})
    if reply.status_code >= 300:
        raise ConfigError(f"the webhook answered HTTP {reply.status_code}")


def smtp(message: Message, options: Mapping[str, Any], settings: Settings | None = None) -> None:
    """E-mail over SMTP: STARTTLS before anything else (unless `starttls = false`, for a local relay), then login
    when `username_env` names a variable."""
    import smtplib
    import ssl
    from email.message import EmailMessage

    host, port = options.get("host"), options.get("port", 587)
    sender, to = options.get("from"), options.get("to")
    if isinstance(to, str):
        to = [to]
    if not isinstance(host, str) or not host or not isinstance(sender, str) or not isinstance(to, list) or not to:
        raise ConfigError("[notify.smtp] needs host, from and to")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ConfigError("[notify.smtp] port must be a whole number from 1 to 65535")
    mail = EmailMessage()
    mail["Subject"], mail["From"], mail["To"] = message.subject, sender, ", ".join(str(t) for t in to)
    mail.set_content(message.text)
    context = ssl.create_default_context(cafile=options.get("cafile") or None)
    with smtplib.SMTP(host, port, timeout=_timeout(options)) as server:
        server.ehlo()
        if str(options.get("starttls", True)).strip().lower() not in ("false", "0", "no", "off"):
            server.starttls(context=context)
            server.ehlo()
        if options.get("username_env"):
            server.login(_env(options["username_env"], "[notify.smtp] username_env"),
                         _env(options.get("password_env"), "[notify.smtp] password_env"))
        server.send_message(mail)


def command(message: Message, options: Mapping[str, Any], settings: Settings | None = None) -> None:
    """Run `argv` (a list, no shell) with the message on its standard input; a non-zero exit is a failure."""
    argv = options.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
        raise ConfigError("[notify.command] argv must be a non-empty list of arguments, e.g. [\"mail\", \"-s\", "
                          "\"factreg\", \"ops@example.com\"]")
    try:
        run = subprocess.run(argv, input=message.text, capture_output=True, text=True, timeout=_timeout(options))
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"[notify.command] {argv[0]}: {exc}") from None
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no output"])[-1][:200]
        raise ConfigError(f"[notify.command] {argv[0]} exited {run.returncode}: {last}")
