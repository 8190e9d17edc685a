"""Shared fixtures: every test runs in its own temp dir with a clean FACTREG_* environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factreg.cli import app
from factreg.store import Registry

pytest_plugins = ["tests.pg_support"]  # the throwaway PostgreSQL server (pg_server, pg_url)

PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "no_proxy",
              "NO_PROXY")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every path at a temp dir, clear FACTREG_* and proxy variables, give git an identity."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for key in list(os.environ):
        if key.startswith("FACTREG_") or key in PROXY_VARS:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("FACTREG_USER_DIR", str(tmp_path / "userdata"))
    monkeypatch.setenv("FACTREG_HOSTNAME", "testhost")
    for var, value in (("GIT_AUTHOR_NAME", "factreg test"), ("GIT_AUTHOR_EMAIL", "test@example.invalid"),
                       ("GIT_COMMITTER_NAME", "factreg test"), ("GIT_COMMITTER_EMAIL", "test@example.invalid")):
        monkeypatch.setenv(var, value)
    return work


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "registry.db"


@pytest.fixture
def db_url(db_path: Path) -> str:
    return f"sqlite:///{db_path}"


@pytest.fixture
def registry(db_url: str) -> Iterator[Registry]:
    reg = Registry(db_url)
    yield reg
    reg.close()


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self):  # type: ignore[no-untyped-def]
        import json

        return json.loads(self.stdout)


@pytest.fixture
def cli(db_url: str, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run `factreg ARGS...` in-process against the test registry; stdout and stderr kept apart."""
    monkeypatch.setenv("FACTREG_DB", db_url)
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Run:
        result = runner.invoke(app, list(args), input=input, catch_exceptions=False)
        return Run(result.exit_code, result.stdout, result.stderr)

    return run
