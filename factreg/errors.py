"""The error hierarchy: each class carries the exit code the CLI uses for it."""

from __future__ import annotations

import re

# Exit codes are a contract (README, "Exit codes").
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNVERIFIABLE = 3
EXIT_INTERNAL = 70  # a bug: an exception no command expected (`Error: internal error: …`, sysexits' EX_SOFTWARE)

_ERROR_PREFIX = re.compile(r"^\s*(?:error\s*:\s*)+", re.IGNORECASE)


class FactregError(Exception):
    """An expected failure: printed as one line `Error: …`, never as a traceback."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def line(self) -> str:
        """The one line the CLI prints: `Error: …`, with the word said once however the message begins
        (a verdict named `error`, a tool's own `error: …` text)."""
        return "Error: " + _ERROR_PREFIX.sub("", self.message)


class UsageError(FactregError):
    """Bad arguments or bad input (exit 2)."""


class BadInput(UsageError):
    """Input that cannot be read: malformed files, non-UTF-8, wrong types (exit 2)."""


class NotFound(UsageError):
    """An id that names nothing in the registry (exit 2)."""


class ConfigError(UsageError):
    """The configuration or the database cannot be used (exit 2)."""


class Findings(FactregError):
    """A check ran and found problems (exit 1)."""

    exit_code = EXIT_FINDINGS


class CouldNotVerify(FactregError):
    """A measurement could not be made: tool missing, endpoint unreachable, run failed (exit 3)."""

    exit_code = EXIT_UNVERIFIABLE
