"""A first week without traps, as a test: from an empty folder, a number typed by hand, given a method, refuted by
`verify`, corrected with `--verification latest`, probed again — the document citing the same id all along, and the
next probe's value the current version of that id.

The endpoint is the stand-in in a process of its own (`python -m factreg.demo.standin`), on 127.0.0.1; it decodes
at about 40 tok/s, ten times below the typed claim."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factreg.cli import app
from factreg.docs import markers
from tests.conftest import Run

SPEC = "ok,first=0.05,gap=0.024,tokens=12,model=m1"
FACT = "front/p/decode_rate"
BODY = {"model": "m1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 20}


@pytest.fixture
def standin() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, "-m", "factreg.demo.standin"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    yield f"http://127.0.0.1:{port}/{SPEC}/v1/chat/completions"
    proc.kill()
    proc.wait()
    proc.stdout.close()


def factreg(*args: str) -> Run:
    """`factreg ARGS` as a user runs it in the folder: the project's own registry (no FACTREG_DB)."""
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def cited(doc: Path) -> list[str]:
    found, bad = markers.parse(doc.read_text(encoding="utf-8"))
    assert bad == []
    return [m.fact_id for m in found]


def test_the_first_week_keeps_the_cited_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, standin: str) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert factreg("init").exit_code == 0
    (folder / "body.json").write_text(json.dumps(BODY), encoding="utf-8")

    # 1. A number measured elsewhere, typed by hand: said once that it cannot be re-verified yet.
    typed = factreg("record", FACT, "--metric", "decode_rate", "--value", "400", "--cond", "model=m1")
    assert typed.exit_code == 0 and "typed by hand" in typed.stderr
    doc = folder / "runbook.md"
    doc.write_text(f"The front end decodes at <!-- fact: {FACT} -->?<!-- /fact -->.\n", encoding="utf-8")
    assert factreg("docs", "sync", ".").exit_code == 0
    assert cited(doc) == [FACT] and "400 tok/s" in doc.read_text(encoding="utf-8")
    assert factreg("docs", "check", ".").exit_code == 0

    # 2. It gets a method, the probe of the endpoint it was measured on.
    given = factreg("method", FACT, "--probe", standin, "--body", "body.json", "--n", "6", "--warmup", "1")
    assert given.exit_code == 0, given.stderr

    # 3. verify refutes it, and names the verification and the command that corrects it.
    refuted = factreg("verify", FACT)
    assert refuted.exit_code == 1, refuted.stdout + refuted.stderr
    head = refuted.stdout.splitlines()[0]
    assert head.startswith("refuted") and "verification " in head
    number = int(head.rsplit("verification ", 1)[1])
    assert f"to correct: factreg correct {FACT} --verification {number}" in refuted.stdout
    check = factreg("docs", "check", ".")
    assert check.exit_code == 1 and f"fix: `factreg correct {FACT} --verification {number}`" in check.stdout

    # 4. Corrected with the newest verification: a new version of the same id, the document synced to it.
    corrected = factreg("correct", FACT, "--verification", "latest", "--json")
    assert corrected.exit_code == 0, corrected.stderr
    assert f"--verification latest: verification {number}" in corrected.stderr
    assert corrected.json()["new"] == f"{FACT}@v3" and corrected.json()["same_id"] is True
    assert cited(doc) == [FACT] and "400 tok/s" not in doc.read_text(encoding="utf-8")
    assert factreg("docs", "check", ".").exit_code == 0

    # 5. Probed again (the next cron run): it feeds the id the document cites.
    probed = factreg("probe", standin, "--body", "body.json", "--n", "6", "--warmup", "1", "--min-uptime", "0",
                     "--record", "front/p", "--json")
    assert probed.exit_code == 0, probed.stderr
    now = factreg("show", FACT, "--json").json()
    assert now["version"] == 4 and now["status"] == "fresh" and now["method"]["kind"] == "probe"
    history = factreg("history", FACT, "--json").json()
    assert [v["version"] for v in history if v["current"]] == [4]
    assert next(v for v in history if v["version"] == 2)["corrected"]["by_version"] == 3
    # the new measurement's text is written by `docs sync` (as after any measurement); the id never changed
    assert factreg("docs", "sync", ".").exit_code == 0
    assert cited(doc) == [FACT]
    final = factreg("docs", "check", ".")
    assert final.exit_code == 0, final.stdout
    assert markers.render(now) in doc.read_text(encoding="utf-8")  # the current version's value is what it says
    assert factreg("status", "--fail-on", "aging").exit_code == 0
