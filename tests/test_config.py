"""Where the registry is: --db, then FACTREG_DB, then .factreg/ above the cwd, then the user data dir."""

import os
from pathlib import Path

from factreg import config


def test_resolution_order(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    deep = project / "docs" / "skills"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    s = config.resolve()
    assert s.db_source == "user data dir"
    assert s.db_url == f"sqlite:///{tmp_path / 'userdata' / 'registry.db'}"
    config.init_project(project)
    s = config.resolve()
    assert s.db_source.startswith("project")
    assert s.db_url == f"sqlite:///{project / '.factreg' / 'registry.db'}"
    assert s.root == project
    monkeypatch.setenv("FACTREG_DB", str(tmp_path / "env.db"))
    s = config.resolve()
    assert (s.db_source, s.db_url) == ("FACTREG_DB", f"sqlite:///{tmp_path / 'env.db'}")
    s = config.resolve("postgresql+psycopg://u:secret@h/db")
    assert s.db_source == "--db" and s.redacted_db_url() == "postgresql+psycopg://u:***@h/db"


def test_config_file_values(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config.init_project(tmp_path)
    s = config.resolve()
    assert s.get("freshness.warn_after") == "30d"
    assert s.get("verify.tolerance") == 0.10
    assert s.get("nothing.here", 7) == 7


def test_init_and_env_commands(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("FACTREG_DB")
    r = cli("init")
    assert r.exit_code == 0, r.stderr
    assert Path(".factreg/registry.db").is_file() and Path(".factreg/config.toml").is_file()
    r = cli("env", "--json")
    data = r.json()
    assert data["db"] == f"sqlite:///{Path.cwd() / '.factreg' / 'registry.db'}"
    assert data["db_source"].startswith("project")
    assert data["hostname"] == "testhost" and data["hostname_source"] == "FACTREG_HOSTNAME"
    # the project registry is now used by default
    assert cli("record", "a/b", "-m", "ttft", "--value", "1").exit_code == 0
    assert os.path.getsize(".factreg/registry.db") > 0
    human = cli("env")
    assert "db_source" in human.stdout


def test_env_never_prints_a_password(cli, monkeypatch):
    monkeypatch.setenv("FACTREG_DB", "postgresql+psycopg://me:hunter2@localhost/reg")
    r = cli("env", "--json")
    assert "hunter2" not in r.stdout + r.stderr
