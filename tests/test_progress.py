"""Progress bars: on a terminal, counts and the time left on stderr; not a terminal (or --quiet), nothing extra."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factreg.cli import progress
from tests.docs_support import record

LABELS = ("importing", "reading documents", "verifying", "probing", "llama-bench")


def _large_jsonl(path: Path, n: int = 6000) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"kind": "record", "id": f"big/host/fact{i:05d}", "metric": "tg_rate",
                                 "value": 10.0 + i % 7, "n": 5, "measured_at": "2026-11-01T00:00:00Z",
                                 "conditions": {"identity": {"machine": "gamebox", "model": "a3b", "build": "b1"},
                                                "info": {"note": "x" * 60}}}) + "\n")
    assert path.stat().st_size >= 1024 * 1024
    return path


def _docs(root: Path, registry) -> Path:  # type: ignore[no-untyped-def]
    record(registry, "d/one", 10.0)
    record(registry, "d/two", 12.0)
    for i in range(5):
        (root / f"page{i}.md").write_text(f"Speed: <!-- fact: d/one -->10.0 tok/s<!-- /fact --> and {i}.\n")
    return root


def _no_bar(stderr: str) -> None:
    assert "\r" not in stderr and "\x1b[" not in stderr
    assert not any(label in stderr for label in LABELS), stderr


def test_not_a_terminal_prints_nothing_extra(cli, registry, tmp_path) -> None:
    big = _large_jsonl(tmp_path / "big.jsonl")
    run = cli("import", str(big))
    assert run.exit_code == 0, run.stderr
    _no_bar(run.stderr)
    assert run.stderr.strip().count("\n") == 0  # the one summary line it always printed

    (tmp_path / "docs").mkdir()
    docs = _docs(tmp_path / "docs", registry)
    run = cli("docs", "check", str(docs))
    _no_bar(run.stderr)
    assert [line.split(":")[0] for line in run.stderr.strip().splitlines()] == ["docs check"]


def test_a_terminal_shows_counts_and_the_time_left(cli, tmp_path, monkeypatch) -> None:
    """stderr made a terminal (and a console that draws): the import draws a bar with N/M and the time left."""
    monkeypatch.setattr(progress, "shown", lambda: True)
    big = _large_jsonl(tmp_path / "big.jsonl")
    run = cli("--color", "import", str(big))
    assert run.exit_code == 0, run.stderr
    assert "importing" in run.stderr
    assert "/6000" in run.stderr


def test_quiet_draws_no_bar_even_on_a_terminal(monkeypatch) -> None:
    import sys

    from factreg.cli.common import GLOBAL

    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    assert progress.shown() is True
    GLOBAL.quiet = True
    try:
        assert progress.shown() is False
    finally:
        GLOBAL.reset()


def test_small_runs_draw_no_bar(monkeypatch) -> None:
    monkeypatch.setattr(progress, "shown", lambda: True)
    with progress.bar("verifying", 1) as step:
        assert step is progress._silent
    with progress.bar("importing", None, minimum=0, when=False) as step:
        assert step is progress._silent


@pytest.mark.parametrize("message,done", [("warm-up 1/2", 0), ("warm-up 2/2", 1), ("request 1/5", 2),
                                          ("request 5/5", 6)])
def test_probe_lines_move_the_bar(message, done) -> None:
    from factreg.cli.probe import _counting

    seen: list[int] = []
    _counting(lambda d, what="": seen.append(d), warmup=2)(message)
    assert seen == [done]
