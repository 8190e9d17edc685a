"""Plugins (factreg/plugins/): the built-ins registered through the hooks, a broken plugin named in one line
while every built-in works on, a plugin's output format and method kind, and discovery only when a command needs
it. The example plugin installed with pip lives in tests/test_plugin_hyperfine.py."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from factreg import plugins


@pytest.fixture(autouse=True)
def fresh_plugins() -> Iterator[None]:
    """Each test loads the plugins anew (the process caches them), and leaves no cache to the next."""
    plugins.forget()
    yield
    plugins.forget()


def install_fake(root: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str, version: str = "0.3") -> None:
    """A distribution `NAME` on sys.path whose entry point in group `factreg` is the module `NAME_plugin`."""
    module = f"{name.replace('-', '_')}_plugin"
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[factreg]\n{name} = {module}\n")
    (root / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(root))


def test_the_built_ins_are_registered_through_the_hooks() -> None:
    import pluggy

    from factreg.plugins import builtins, hookspecs

    pm = pluggy.PluginManager(plugins.GROUP)
    pm.add_hookspecs(hookspecs)
    pm.register(builtins, name="factreg")
    seen: dict[str, list[str]] = {}
    for hook, (attr, _cls, key) in plugins.HOOKS.items():
        got: list[object] = []
        getattr(pm.hook, hook)(register=got.append)
        seen[attr] = [getattr(x, key) for x in got]
    assert seen == {
        "verifiers": ["llama-bench", "probe", "sweep"],
        "importers": ["jsonl", "llama-bench", "vllm-bench", "aiperf", "llama-benchy"],
        "output_formats": ["text", "json", "github", "sarif"],
        "notifiers": ["webhook", "smtp", "command"],
    }
    own = plugins.loaded(discover=False)
    assert [p.name for p in own.plugins] == ["factreg"] and own.plugins[0].builtin
    # what they name is what runs: each reference resolves to the function the commands call
    from factreg.cli import formats
    from factreg.measure import llamabench, probe

    assert plugins.load(own.verifiers["llama-bench"].remeasure) is llamabench.remeasure
    assert plugins.load(own.verifiers["probe"].remeasure) is probe.remeasure
    assert plugins.load(own.output_formats["github"].render) is formats.github


def test_factreg_plugins_lists_the_built_ins_with_a_version(cli) -> None:
    from factreg import __version__

    r = cli("plugins", "--json")
    assert r.exit_code == 0, r.stderr
    [own] = r.json()["plugins"]
    assert own["name"] == "factreg" and own["version"] == __version__ and own["builtin"] is True
    assert "verifier:probe" in own["provides"] and "notifier:webhook" in own["provides"]
    assert r.json()["failed"] == []


BROKEN = "raise RuntimeError('this plugin is broken on purpose')\n"


def test_a_plugin_that_raises_on_import_is_named_in_one_line_and_every_built_in_works(cli, registry, tmp_path,
                                                                                      monkeypatch):
    install_fake(tmp_path / "site", monkeypatch, "factreg-broken", BROKEN)
    r = cli("plugins")
    assert r.exit_code == 0
    lines = [line for line in r.stderr.splitlines() if "factreg-broken" in line]
    assert len(lines) == 1 and "did not load" in lines[0] and "broken on purpose" in lines[0]
    assert "Traceback" not in r.stderr and "factreg (built-in)" in r.stdout
    # the built-in commands that need plugins still work, and the line is said once per process
    assert cli("record", "x/ttft", "-m", "ttft", "--samples", "0.4,0.5,0.45,0.5,0.42", "-c", "model=m", "-c",
               "endpoint=e").exit_code == 0
    export = tmp_path / "x.jsonl"
    assert cli("export", "-o", str(export)).exit_code == 0
    imported = cli("import", str(export))
    assert imported.exit_code == 0, imported.stderr
    assert cli("status", "--format", "github").exit_code in (0, 1)
    v = cli("verify", "x/ttft", "--json")
    assert v.json()[0]["verdict"] == "skipped"  # a manual fact: nothing to re-run, as without any plugin
    assert "did not load" not in v.stderr  # said once per process, by the first command that loaded plugins
    plugins.forget()  # a new process: a method kind factreg does not know makes verify look for plugins
    from tests.test_verify import set_method

    set_method(registry, "x/ttft", {"kind": "nosuch", "command": "true"})
    again = cli("verify", "x/ttft", "--json")
    assert again.stderr.count("did not load") == 1 and again.exit_code == 3
    assert "no installed plugin provides it" in again.json()[0]["message"]


def test_a_plugin_whose_hook_raises_or_that_takes_a_built_in_name_is_left_out_as_a_whole(cli, tmp_path, monkeypatch):
    install_fake(tmp_path / "a", monkeypatch, "hook-raises", (
        "from factreg.plugins import OutputFormat, hookimpl\n"
        "@hookimpl\ndef register_output_formats(register):\n"
        "    register(OutputFormat('half', 'registered before the error', 'builtins:len'))\n"
        "@hookimpl\ndef register_verifiers(register):\n    raise ValueError('no verifiers today')\n"))
    install_fake(tmp_path / "b", monkeypatch, "usurper", (
        "from factreg.plugins import Verifier, hookimpl\n"
        "@hookimpl\ndef register_verifiers(register):\n    register(Verifier('probe', 'os:system'))\n"))
    found = plugins.loaded(report=None)
    assert [p.name for p in found.plugins] == ["factreg"]
    why = dict(found.failures)
    assert "no verifiers today" in why["hook-raises (hook-raises 0.3)"]
    assert "'probe' is already provided by factreg" in why["usurper (usurper 0.3)"]
    assert "half" not in found.output_formats  # nothing of a failed plugin is kept
    assert plugins.load(found.verifiers["probe"].remeasure).__module__ == "factreg.measure.probe"


TAP = """\
from factreg.plugins import OutputFormat, hookimpl


def tap(findings, rules=None, properties=None):
    found = list(findings)
    lines = [f"1..{len(found)}"] + [f"not ok {i} - {f.message}" for i, f in enumerate(found, 1)]
    return "\\n".join(lines) + "\\n"


@hookimpl
def register_output_formats(register):
    register(OutputFormat("tap", "Test Anything Protocol", tap))
"""


def test_a_plugins_output_format_is_a_format_of_every_command_with_findings(cli, tmp_path, monkeypatch):
    assert "--format must be one of" in cli("status", "--format", "tap").stderr
    plugins.forget()
    install_fake(tmp_path / "site", monkeypatch, "factreg-tap", TAP)
    assert cli("record", "x/old", "-m", "ttft", "--value", "0.4", "-c", "model=m", "-c", "endpoint=e",
               "--measured-at", "2026-01-01T00:00:00Z").exit_code == 0
    r = cli("status", "--format", "tap")
    assert r.stdout.startswith("1..1\nnot ok 1 - ") and "x/old" in r.stdout


def test_a_method_kind_no_installed_plugin_provides_is_refused_and_nothing_runs(cli, registry, isolated):
    from tests.test_verify import set_method

    assert cli("record", "x/t", "-m", "wall_time", "--unit", "s", "--samples", "0.2,0.21,0.2",
               "-c", "machine=m").exit_code == 0
    set_method(registry, "x/t", {"kind": "hyperfine", "command": "touch pwned", "runs": 3})
    r = cli("verify", "x/t", "--json")
    assert r.exit_code == 3
    assert "no verifier for method kind 'hyperfine': no installed plugin provides it" in r.json()[0]["message"]
    assert not (isolated / "pwned").exists()
    refused = cli("record", "x/u", "-m", "ttft", "--value", "0.2", "-c", "model=m", "-c", "endpoint=e")
    assert refused.exit_code == 0  # (a manual fact is fine; a kind nobody provides is refused on the way in)
    from factreg.errors import UsageError
    from factreg.registry import facts

    with pytest.raises(UsageError, match="unknown method kind 'hyperfine'"):
        facts.build_rows(facts.NewFact(id="x/v", metric="ttft", value=0.2, identity={"model": "m", "endpoint": "e"},
                                       method={"kind": "hyperfine", "command": "true"}), 300)


FAST_PATHS = (["--version"], ["list"], ["show", "x/a"], ["status"], ["docs", "check"])


@pytest.mark.parametrize("args", FAST_PATHS, ids=lambda a: " ".join(a))
def test_plugins_are_not_discovered_on_the_fast_paths(args, db_path, tmp_path, monkeypatch):
    """Neither pluggy nor any entry point is looked at by the commands that must start fast."""
    install_fake(tmp_path / "site", monkeypatch, "factreg-broken", BROKEN)
    env = {"FACTREG_DB": str(db_path), "PYTHONPATH": str(tmp_path / "site")}
    import os

    from tests.conftest import pinned_env

    subprocess.run([sys.executable, "-m", "factreg", "record", "x/a", "-m", "ttft", "--value", "0.3", "-c",
                    "model=m", "-c", "endpoint=e"], env=pinned_env(**env), check=True, capture_output=True)
    code = ("import sys\nfrom factreg.__main__ import main\nsys.argv = ['factreg', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('PLUGGY' if 'pluggy' in sys.modules else 'NO-PLUGGY', file=sys.stderr)\n")
    run = subprocess.run([sys.executable, "-c", code, *args], env=pinned_env(**env), capture_output=True,
                         text=True, cwd=os.getcwd())
    assert run.stderr.strip().splitlines()[-1] == "NO-PLUGGY", run.stderr
    assert "did not load" not in run.stderr
    # and a command that needs plugins does look: the broken one is named
    needs = subprocess.run([sys.executable, "-m", "factreg", "plugins"], env=pinned_env(**env), capture_output=True,
                           text=True)
    assert "factreg-broken" in needs.stderr and needs.returncode == 0


def test_a_stale_fact_of_a_plugins_kind_is_to_be_re_verified_not_re_recorded() -> None:
    from typing import Any, cast

    from factreg.publish.report import what_to_do

    def stale(kind: str) -> Any:
        return cast(Any, {"id": "h/x", "status": "stale", "status_reason": "measured 100d ago",
                          "method": {"kind": kind}})

    assert what_to_do(stale("hyperfine"), None) == "re-verify it: `factreg verify h/x`"
    assert what_to_do(stale("probe"), None) == "re-verify it: `factreg verify h/x`"
    assert what_to_do(stale("manual"), None).startswith("re-measure it and record a new version")


def test_verify_n_sets_a_plugins_samples_field(tmp_path, monkeypatch) -> None:
    from factreg.measure import verify as engine

    install_fake(tmp_path / "site", monkeypatch, "factreg-tally", (
        "from factreg.plugins import Verifier, hookimpl\n"
        "@hookimpl\ndef register_verifiers(register):\n"
        "    register(Verifier('tally', 'os:getcwd', samples_key='count'))\n"))
    assert engine.with_n({"kind": "tally", "count": 3, "x": 1}, 7) == {"kind": "tally", "count": 7, "x": 1}
    assert engine.with_n({"kind": "mystery", "count": 3}, 7) == {"kind": "mystery", "count": 3}
    assert engine.with_n({"kind": "manual"}, 7) == {"kind": "manual"}
