"""Configuration, resolved in one place: flag > FACTREG_* environment > project `.factreg/` > user data dir."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factreg.errors import ConfigError

PROJECT_DIR_NAME = ".factreg"
REGISTRY_FILE = "registry.db"
CONFIG_FILE = "config.toml"
# Below this server uptime a measurement is `cold` (`[probe] min_uptime_s`): the one home of the 300 s.
DEFAULT_MIN_UPTIME_S = 300.0


def user_data_dir() -> Path:
    """The per-user data directory (XDG on Linux, Application Support on macOS, APPDATA on Windows)."""
    override = os.environ.get("FACTREG_USER_DIR")
    if override:
        return Path(override)
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming")) / "factreg"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "factreg"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "factreg"


def user_cache_dir() -> Path | None:
    """Where factreg keeps what it can compute again (the document cache): FACTREG_CACHE_DIR, else the per-user
    cache directory (XDG on Linux, Caches on macOS, LOCALAPPDATA on Windows). FACTREG_CACHE_DIR set to an empty
    value (or `off`) turns caching off: None."""
    override = os.environ.get("FACTREG_CACHE_DIR")
    if override is not None:
        return None if override.strip() in ("", "off") else Path(override)
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "factreg" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "factreg"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "factreg"


def find_project_dir(start: Path | None = None) -> Path | None:
    """The nearest `.factreg/` folder at or above `start` (the current directory by default)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_DIR_NAME
        if candidate.is_dir():
            return candidate
    return None


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file; `%`, `?` and `#` in the path are percent-encoded (a URL's query and
    fragment marks), and `store.sqlite_file` decodes them as SQLAlchemy does."""
    text = str(path).replace("%", "%25").replace("?", "%3F").replace("#", "%23")
    return f"sqlite:///{text}"


def hostname() -> str:
    """This machine's name as facts record it; FACTREG_HOSTNAME overrides (fleets, tests)."""
    import socket  # here, not above: shell completion resolves the registry without it

    return os.environ.get("FACTREG_HOSTNAME") or socket.gethostname()


def model_file() -> str | None:
    """The model file FACTREG_MODEL names for the live demo and the real-model tests (default: SmolLM2 from its
    wheel, `demo/realmodel.py`), or None."""
    return os.environ.get("FACTREG_MODEL") or None


@dataclass
class Settings:
    """Everything factreg resolved about where it works, and why."""

    db_url: str
    db_source: str
    project_dir: Path | None
    config_path: Path | None
    file_config: dict[str, Any] = field(default_factory=dict)
    # Environment variables a stored method may expand besides `[probe] allow_env`: those named on the command
    # line now (`verify --api-key-env`).
    extra_allow_env: tuple[str, ...] = ()
    _hostname: str | None = field(default=None, repr=False)

    @property
    def hostname(self) -> str:
        """This machine's name (`hostname()`), learned when first asked: a read command never asks."""
        if self._hostname is None:
            self._hostname = hostname()
        return self._hostname

    def get(self, dotted: str, default: Any = None) -> Any:
        """A value from the config file by dotted path (`freshness.warn_after`)."""
        node: Any = self.file_config
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    @property
    def root(self) -> Path:
        """The project root: the folder holding `.factreg/`, else the current directory."""
        return self.project_dir.parent if self.project_dir else Path.cwd()

    @property
    def min_uptime_s(self) -> float:
        """Below this server uptime a measurement is `cold` (`[probe] min_uptime_s`, DEFAULT_MIN_UPTIME_S)."""
        return float(self.get("probe.min_uptime_s", DEFAULT_MIN_UPTIME_S))

    def allowed_env(self) -> frozenset[str]:
        """The `${VAR}`s a stored method may expand: `[probe] allow_env` and `extra_allow_env`."""
        return frozenset(self.names("probe.allow_env")) | frozenset(self.extra_allow_env)

    def names(self, dotted: str) -> list[str]:
        """A list of strings from the config file (absent: empty); anything else is a ConfigError."""
        value = self.get(dotted, [])
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise ConfigError(f"{self.config_path or 'config'}: [{dotted.rsplit('.', 1)[0]}] "
                              f"{dotted.rsplit('.', 1)[1]} must be a list of strings")
        return list(value)

    def redacted_db_url(self) -> str:
        return redact_url(self.db_url)


def redact_url(url: str) -> str:
    """A database URL with any password (in the userinfo or a query parameter) replaced by `***`."""
    from factreg.secrets import redact

    return redact(url)


def _load_config_file(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(f"config file {path} is over {MAX_CONFIG_BYTES // 1024} KiB: no configuration is "
                              "that long (it would be read by every command)")
        loaded = tomllib.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    problem = config_problem(loaded)
    if problem:
        raise ConfigError(f"config file {path}: {problem}")
    return dict(loaded)


# A configuration is a few hundred bytes; one of megabytes (400,000 tables: 10 s and 450 MB for every command) is
# not one.
MAX_CONFIG_BYTES = 1024 * 1024

# The config file's known keys and what each must hold: (kind, low, high) — a number within [low, high], a whole
# number, text, or a list of text. Unknown keys are left alone (for other versions of factreg).
_NUMBER, _WHOLE, _TEXT, _TEXTS, _FLAG = "a number", "a whole number", "text", "a list of text", "true or false"
_FLAG_WORDS = ("true", "false", "1", "0", "yes", "no", "on", "off")
_KEYS: dict[str, tuple[str, float, float]] = {
    "freshness.warn_after": (_TEXT, 0, 0),
    "freshness.error_after": (_TEXT, 0, 0),
    "freshness.metrics.*.warn_after": (_TEXT, 0, 0),
    "freshness.metrics.*.error_after": (_TEXT, 0, 0),
    "verify.tolerance": (_NUMBER, 0, 10),
    "verify.tolerance_by_metric.*": (_NUMBER, 0, 10),
    "verify.alpha": (_NUMBER, 0, 1),
    "verify.confirm_refutes": (_WHOLE, 0, 10),
    "verify.timeout_s": (_NUMBER, 0, 7 * 86400),
    "verify.control": (_FLAG, 0, 0),
    "docs.roots": (_TEXTS, 0, 0),
    "docs.max_file_mb": (_NUMBER, 0, 1024 * 1024),
    "probe.min_uptime_s": (_NUMBER, 0, 365 * 86400),
    "probe.max_response_mb": (_NUMBER, 0, 64 * 1024),
    "probe.allow_env": (_TEXTS, 0, 0),
    "retention.raw_runs": (_WHOLE, 0, 1_000_000),
    "bench.model_roots": (_TEXTS, 0, 0),
    "report.lang": (_TEXT, 0, 0),
    "verify.looks": (_WHOLE, 1, 100),
    "verify.budget": (_NUMBER, 0, 1000),
    "record.precision": (_NUMBER, 0, 1),
    "record.budget": (_NUMBER, 0, 1000),
    "notify.webhook.url": (_TEXT, 0, 0),
    "notify.webhook.url_env": (_TEXT, 0, 0),
    "notify.webhook.allow_env": (_TEXTS, 0, 0),
    "notify.webhook.timeout_s": (_NUMBER, 0, 600),
    "notify.smtp.host": (_TEXT, 0, 0),
    "notify.smtp.port": (_WHOLE, 1, 65535),
    "notify.smtp.from": (_TEXT, 0, 0),
    "notify.smtp.to": (_TEXTS, 0, 0),
    "notify.smtp.username_env": (_TEXT, 0, 0),
    "notify.smtp.password_env": (_TEXT, 0, 0),
    "notify.smtp.starttls": (_FLAG, 0, 0),
    "notify.smtp.cafile": (_TEXT, 0, 0),
    "notify.smtp.timeout_s": (_NUMBER, 0, 600),
    "notify.command.argv": (_TEXTS, 0, 0),
    "notify.command.timeout_s": (_NUMBER, 0, 600),
    "lint.select": (_TEXTS, 0, 0),
    "lint.ignore": (_TEXTS, 0, 0),
    "lint.preview": (_FLAG, 0, 0),
}
_TABLES = ("freshness", "freshness.metrics", "freshness.metrics.*", "verify", "verify.tolerance_by_metric", "docs",
           "probe", "retention", "bench", "report", "record", "notify", "notify.webhook", "notify.webhook.headers",
           "notify.smtp", "notify.command", "lint")


def config_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with a loaded config file (a known key holding the wrong type or an out-of-range number)."""
    import math
    import re

    def walk(node: Any, path: str) -> Iterator[tuple[str, str, Any]]:
        if isinstance(node, dict):
            for key, value in node.items():
                name = f"{path}.{key}" if path else str(key)
                yield name, re.sub(r"^(freshness\.metrics|verify\.tolerance_by_metric)\.[^.]+", r"\1.*", name), value
                yield from walk(value, name)

    for name, pattern, value in walk(data, ""):
        if pattern in _TABLES and not isinstance(value, dict):
            return f"[{name}] must be a table"
        rule = _KEYS.get(pattern)
        if rule is None:
            continue
        kind, low, high = rule
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind == _TEXT:
            ok = isinstance(value, str)
        elif kind == _TEXTS:
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        elif kind == _FLAG:
            ok = isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in _FLAG_WORDS)
        elif kind == _NUMBER:
            ok = number and math.isfinite(value) and low <= value <= high
        else:
            ok = number and isinstance(value, int) and low <= value <= high
        if not ok:
            bounds = f" from {low:g} to {high:g}" if kind in (_NUMBER, _WHOLE) else ""
            return f"{name} must be {kind}{bounds}, got {str(value)[:40]!r}"
    return None


def resolve(db: str | None = None, cwd: Path | None = None) -> Settings:
    """Resolve the database URL and configuration: flag, then env, then project, then user dir."""
    project_dir = find_project_dir(cwd)
    config_path = None
    file_config: dict[str, Any] = {}
    if project_dir is not None and (project_dir / CONFIG_FILE).is_file():
        config_path = project_dir / CONFIG_FILE
        file_config = _load_config_file(config_path)

    url, source = resolve_db(db, project_dir)
    return Settings(
        db_url=url,
        db_source=source,
        project_dir=project_dir,
        config_path=config_path,
        file_config=file_config,
    )


def resolve_db(db: str | None, project_dir: Path | None) -> tuple[str, str]:
    """The registry's URL and where it came from: --db, then FACTREG_DB, then the project's `.factreg/`, then the
    user data dir. Shell completion (factreg/complete.py) calls this alone: it reads no config file."""
    if db:
        return _as_url(db), "--db"
    if os.environ.get("FACTREG_DB"):
        return _as_url(os.environ["FACTREG_DB"]), "FACTREG_DB"
    if project_dir is not None:
        return sqlite_url(project_dir / REGISTRY_FILE), f"project ({project_dir})"
    return sqlite_url(user_data_dir() / REGISTRY_FILE), "user data dir"


def _as_url(value: str) -> str:
    """Accept a SQLAlchemy URL or a plain file path (taken as SQLite)."""
    if "://" in value:
        return value
    return sqlite_url(Path(value).expanduser().resolve())


DEFAULT_CONFIG = f"""\
# factreg configuration for this project. Durations: 30m, 12h, 30d, 2w.
[freshness]
warn_after = "30d"
error_after = "90d"

# Per-metric defaults override the registry default; a fact's own thresholds override both.
# [freshness.metrics.tg_rate]
# warn_after = "14d"
# error_after = "60d"

[verify]
# Practical tolerance: a difference inside it never refutes a fact.
tolerance = 0.10
# [verify.tolerance_by_metric]
# ttft = 0.15
# A control measurement runs around every measured run, so a verdict can tell a busier machine from a wrong
# claim (docs/machine.md); `false` turns it off.
# control = true

[docs]
# Folders whose Markdown cites facts; `factreg correct` syncs them.
roots = ["."]

[probe]
# A measurement taken less than this many seconds after the server started is flagged `cold`.
min_uptime_s = {DEFAULT_MIN_UPTIME_S:g}
# The environment variables a stored probe method may name in a header (`${{MY_TOKEN}}`); `verify
# --api-key-env VAR` allows one more for that run. Any other `${{VAR}}` in a stored method is refused.
# allow_env = ["MY_TOKEN"]

[retention]
# Raw output (a probe's per-request events, ~1 KB a request) is kept for this many newest runs of each fact and
# its current version; older runs keep their value, spread, n, statistics and samples. `factreg prune` applies it.
raw_runs = 5

# [lint]
# The rules of `docs lint` (docs/lint-rules.md): ids or prefixes, as ruff's `select`/`ignore`; `preview = true`
# (or `--all`) adds the rules outside the default set.
# select = ["FR1"]
# ignore = ["FR122"]
# preview = false

# [bench]
# Folders whose .gguf models `verify` may hand to llama-bench (default: the folders of models benched here).
# model_roots = ["~/models"]
"""


# What `.factreg/.gitignore` keeps out of git: the SQLite registry and its companions (registry/snapshot.py).
IGNORED_FILES = ("registry.db", "registry.db-wal", "registry.db-shm", "registry.db-journal")


def init_project(where: Path) -> Path:
    """Create `.factreg/` with a default config; return the folder."""
    folder = where / PROJECT_DIR_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        cfg = folder / CONFIG_FILE
        if not cfg.exists():
            cfg.write_text(DEFAULT_CONFIG, encoding="utf-8")
        gitignore = folder / ".gitignore"
        # git keeps the registry as text (`registry.jsonl`, written by --commit); the SQLite file is this
        # checkout's own (registry/snapshot.py).
        had = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.exists() else []
        missing = [name for name in IGNORED_FILES if name not in had]
        if missing:
            with gitignore.open("a", encoding="utf-8") as fh:
                if had and not gitignore.read_text(encoding="utf-8").endswith("\n"):
                    fh.write("\n")
                fh.write("".join(f"{name}\n" for name in missing))
    except OSError as exc:
        raise ConfigError(f"cannot create {folder}: {exc.strerror or exc}") from None
    return folder
