"""Helpers for the review-time check tests and their benchmark: a git repository with history, the SARIF schema."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_NAME = "sarif-schema-2.1.0.json"

# GitHub's workflow command grammar: `::command key=value,key=value::message`, with properties escaped (`%`, CR,
# LF, `:`, `,`) and the message escaped (`%`, CR, LF), so neither holds a raw separator or line break.
WORKFLOW_COMMAND = re.compile(
    r"^::(error|warning|notice)( (file|line|col|endLine|endColumn|title)=[^,:\r\n]*"
    r"(,(file|line|col|endLine|endColumn|title)=[^,:\r\n]*)*)?::[^\r\n]*$"
)


def sarif_schema_path() -> Path | None:
    """The official SARIF 2.1.0 schema: tests/data/, else the shared folder beside the repository, else
    FACTREG_SARIF_SCHEMA."""
    for candidate in (
        ROOT / "tests" / "data" / SCHEMA_NAME,
        ROOT.parent / "shared" / "reference" / SCHEMA_NAME,
        Path(os.environ.get("FACTREG_SARIF_SCHEMA", "/nonexistent")),
    ):
        if candidate.is_file():
            return candidate
    return None


def validate_sarif(log: Any) -> None:
    """Validate a SARIF log against the official schema (draft-04 or draft-07, whichever it declares)."""
    import jsonschema

    path = sarif_schema_path()
    assert path is not None, "the SARIF 2.1.0 schema is missing"
    schema = json.loads(path.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    cls(schema, format_checker=cls.FORMAT_CHECKER).validate(log)


def unescape(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid", "HOME": str(repo.parent)}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def init_repo(repo: Path) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "commit.gpgsign", "false")
