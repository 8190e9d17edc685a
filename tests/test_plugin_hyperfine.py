"""The example plugin, examples/factreg-hyperfine, installed with pip into a throwaway venv (the suite's own stays
clean): `factreg plugins` lists it, `import` recognises real hyperfine exports (made by running the examples of
hyperfine's own documentation, examples/factreg-hyperfine/tests/data/README.md), and `verify` re-runs an
allow-listed command with the real hyperfine and gives confirmed or refuted as for a built-in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import pinned_env

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "examples" / "factreg-hyperfine"
DATA = PLUGIN / "tests" / "data"



@pytest.fixture(scope="module", autouse=True)
def hyperfine() -> None:
    """Debian's hyperfine, installed by `.ci/run` and the README's set-up, never by the tests: missing, the tests
    fail in CI and as root, and are skipped elsewhere."""
    if shutil.which("hyperfine") is None:
        why = "hyperfine is not installed: `apt-get install -y hyperfine` (as .ci/run does)"
        if os.environ.get("CI") or (hasattr(os, "geteuid") and os.geteuid() == 0):
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv that sees the suite's packages (factreg among them) through a .pth file, with the plugin installed
    by `pip install --no-deps -e examples/factreg-hyperfine`: nothing is installed into the suite's own venv."""
    where = tmp_path_factory.mktemp("plugin-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    suite = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "suite.pth").write_text(f"import site; site.addsitedir({suite!r})\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                              "--no-build-isolation", "--no-index", "-e", str(PLUGIN)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    return python


def factreg(python: Path, *args: str, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "factreg", *args], env=pinned_env(FACTREG_DB=str(db),
                          FACTREG_HOSTNAME="testhost"), capture_output=True, text=True)


def test_the_installed_plugin_is_listed_with_its_version_and_the_suites_venv_stays_clean(venv, db_path) -> None:
    r = factreg(venv, "plugins", "--json", db=db_path)
    assert r.returncode == 0, r.stderr
    found = {p["name"]: p for p in json.loads(r.stdout)["plugins"]}
    assert found["hyperfine"]["distribution"] == "factreg-hyperfine" and found["hyperfine"]["version"] == "0.1.0"
    assert found["hyperfine"]["provides"] == ["verifier:hyperfine", "importer:hyperfine"]
    assert "factreg" in found and found["factreg"]["builtin"]
    here = subprocess.run([sys.executable, "-m", "factreg", "plugins", "--json"], env=pinned_env(FACTREG_DB=str(db_path)),
                          capture_output=True, text=True)
    assert [p["name"] for p in json.loads(here.stdout)["plugins"]] == ["factreg"]


def test_import_recognises_real_hyperfine_exports_with_parameters_as_conditions(venv, db_path) -> None:
    r = factreg(venv, "import", str(DATA / "parameter-scan.json"), str(DATA / "sleep.json"), "--json", db=db_path)
    assert r.returncode == 0, r.stderr
    assert "parameter-scan.json: hyperfine --export-json results" in r.stderr
    assert sorted(i.split("@")[0] for i in json.loads(r.stdout)["ids"]) == [
        "hyperfine/sleep-0.020", "hyperfine/sleep-0.021", "hyperfine/sleep-0.022", "hyperfine/sleep-0.3",
        "hyperfine/sleep-0.5", "hyperfine/sleep-0.7"]
    shown = json.loads(factreg(venv, "show", "hyperfine/sleep-0.5", "--json", db=db_path).stdout)
    export = json.loads((DATA / "parameter-scan.json").read_text())["results"][1]
    assert shown["samples"] == export["times"] and shown["metric"] == "wall_time" and shown["unit"] == "s"
    assert shown["conditions"]["identity"] == {"command": "sleep 0.5", "machine": "testhost", "param.delay": "0.5"}
    assert shown["method"] == {"kind": "hyperfine", "command": "sleep 0.5", "runs": len(export["times"])}
    # without the plugin, the same file is no format factreg recognises: one line, nothing written
    plain = subprocess.run([sys.executable, "-m", "factreg", "import", str(DATA / "sleep.json")],
                           env=pinned_env(FACTREG_DB=str(db_path)), capture_output=True, text=True)
    assert plain.returncode == 2 and plain.stderr.startswith("Error: ") and "not a format factreg" in plain.stderr
    assert len(plain.stderr.strip().splitlines()) == 1


def _export(tmp: Path, command: str, runs: int) -> Path:
    out = tmp / "made.json"
    subprocess.run(["hyperfine", "--style", "basic", "--runs", str(runs), "--export-json", str(out), "--", command],
                   check=True, capture_output=True)
    return out


def test_verify_reruns_only_an_allow_listed_command_and_confirms_or_refutes(venv, db_path, isolated) -> None:
    delay = isolated / "delay"
    delay.write_text("0.2")
    marker = isolated / "ran"
    command = f"sleep $(cat {delay}) && touch {marker}"
    made = _export(isolated, command, runs=5)
    marker.unlink()
    r = factreg(venv, "import", "--trust", str(made), "--json", db=db_path)
    assert r.returncode == 0, r.stderr
    [fid] = [i.split("@")[0] for i in json.loads(r.stdout)["ids"]]

    refused = factreg(venv, "verify", fid, "--json", db=db_path)  # not on the allow-list: nothing runs
    assert refused.returncode == 3 and "is not in [hyperfine] allow" in json.loads(refused.stdout)[0]["message"]
    assert not marker.exists()

    (isolated / ".factreg").mkdir(exist_ok=True)
    (isolated / ".factreg" / "config.toml").write_text(f"[hyperfine]\nallow = [{json.dumps(command)}]\n")
    confirmed = factreg(venv, "verify", fid, "--json", db=db_path)
    [result] = json.loads(confirmed.stdout)
    assert result["verdict"] in ("confirmed", "inconclusive"), result  # the same 0.2 s sleep
    if result["verdict"] == "inconclusive":  # a noisy moment on a shared machine: measured again
        [result] = json.loads(factreg(venv, "verify", fid, "--json", "--n", "10", db=db_path).stdout)
    assert result["verdict"] == "confirmed", result
    assert marker.exists() and confirmed.returncode == 0

    delay.write_text("0.6")  # the command now takes three times as long
    refuted = factreg(venv, "verify", fid, "--json", db=db_path)
    [result] = json.loads(refuted.stdout)
    assert result["verdict"] == "refuted" and refuted.returncode == 1, result
    assert result["new"]["value"] > 2.5 * result["old"]["value"]
    # the suite's own factreg, without the plugin, refuses the kind and runs nothing
    marker.unlink()
    plain = subprocess.run([sys.executable, "-m", "factreg", "verify", fid, "--json"], cwd=isolated,
                           env=pinned_env(FACTREG_DB=str(db_path)), capture_output=True, text=True)
    assert "no installed plugin provides it" in json.loads(plain.stdout)[0]["message"] and not marker.exists()
