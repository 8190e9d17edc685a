"""Plugins: what factreg can be extended with, and its own built-ins, registered the same way.

Four hooks (`hookspecs.py`, pluggy, entry-point group `factreg`): `register_verifiers` (a method kind `verify` can
re-run), `register_importers` (a result-file format `import` reads), `register_output_formats` (a `--format` for
findings) and `register_notifiers` (a channel for `verify --notify`). factreg's own are a plugin like any other,
`builtins.py`, registered first; a plugin cannot replace one of them.

Functions are given as `"module:function"` references (or callables), imported only when used: listing the
plugins imports no verifier. Plugins are discovered only when a command needs them (`loaded()`), never when this
module is imported, and never on the fast paths (`--version`, `show`, `list`, `status`, `docs check`). A plugin
that fails to load (its import raises, a hook raises, it registers something invalid) is named in one line on
stderr and left out as a whole; the built-ins and the other plugins work on.

A method kind that no installed plugin provides is never run (`measure/verify.py`): a stored method is data,
and the registry is not a place code may come from.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

GROUP = "factreg"  # the entry-point group and pluggy's project name
BUILTIN = "factreg"  # the built-ins' plugin name
Ref = str | Callable[..., Any]  # "module:function", or the function
NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")  # a method kind, format or notifier name


@dataclass(frozen=True)
class Verifier:
    """A method kind `verify` can re-run: `remeasure(method, facts, settings) -> {fact id: Measurement}`."""

    kind: str
    remeasure: Ref
    measures: str = ""  # what it measures (its metrics)
    conditions: str = ""  # how its conditions are read
    samples_key: str | None = None  # the method's field holding its number of samples (what `verify --n` sets)
    plugin: str = ""


@dataclass(frozen=True)
class Importer:
    """A result-file format `import` reads: a plugin's `read(registry, paths, *, settings, say, trust) -> counts`;
    `recognise(path) -> bool` claims a file by its content (asked after the built-in formats, which
    `measure/resultfile.py` recognises together). factreg's own readers take the options of benchmark output as
    well (`--measured-at`, `--cond`, `--machine`, …), which `import` passes them."""

    name: str
    description: str
    read: Ref
    recognise: Ref | None = None
    plugin: str = ""


@dataclass(frozen=True)
class OutputFormat:
    """A `--format`: `render(findings, rules, properties)` gives text (`produces="text"`) or a JSON value
    (`produces="json"`); text and json have no renderer: each command writes its own."""

    name: str
    description: str
    render: Ref | None = None
    produces: str = "text"
    plugin: str = ""


@dataclass(frozen=True)
class Notifier:
    """An alert channel: `send(message, options, settings)` raises on failure; `options` is its `[notify.NAME]`
    table from the config."""

    name: str
    description: str
    send: Ref
    plugin: str = ""


@dataclass(frozen=True)
class Message:
    """What a notifier sends: a subject line, the text (secrets redacted), and the changes as data."""

    subject: str
    text: str
    changes: tuple[Mapping[str, Any], ...] = ()


@dataclass
class Plugin:
    """A loaded plugin: its name, distribution and version, and what it provides (`kind:name`)."""

    name: str
    distribution: str
    version: str
    builtin: bool = False
    provides: list[str] = field(default_factory=list)


@dataclass
class Loaded:
    """Every loaded plugin, the ones that failed (name, one line why), and what they provide by name."""

    plugins: list[Plugin] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    verifiers: dict[str, Verifier] = field(default_factory=dict)
    importers: dict[str, Importer] = field(default_factory=dict)
    output_formats: dict[str, OutputFormat] = field(default_factory=dict)
    notifiers: dict[str, Notifier] = field(default_factory=dict)


# hook → (the Loaded attribute, the dataclass, its name field)
HOOKS: dict[str, tuple[str, type, str]] = {
    "register_verifiers": ("verifiers", Verifier, "kind"),
    "register_importers": ("importers", Importer, "name"),
    "register_output_formats": ("output_formats", OutputFormat, "name"),
    "register_notifiers": ("notifiers", Notifier, "name"),
}

HOOKS_KEYS = {attr: key for attr, _, key in HOOKS.values()}

_cache: dict[bool, Loaded] = {}


def __getattr__(name: str) -> Any:
    """`hookimpl` (pluggy's marker), imported on first use so that importing this module imports no pluggy."""
    if name == "hookimpl":
        from factreg.plugins.hookspecs import hookimpl

        return hookimpl
    raise AttributeError(name)


def load(ref: Ref) -> Callable[..., Any]:
    """The function a reference names (`"module:function"`), imported now."""
    if callable(ref):
        return ref
    module, _, attr = str(ref).partition(":")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    return cast("Callable[..., Any]", target)


def one_line(exc: BaseException) -> str:
    """An exception as one short line, secrets redacted."""
    from factreg.secrets import redact

    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return redact(text if len(text) <= 200 else text[:199] + "…")


def _say_failure(name: str, why: str) -> None:
    from factreg.terminal import visible

    print(visible(f"factreg: plugin {name} did not load ({why}); the built-ins and other plugins work on"),
          file=sys.stderr)


def loaded(discover: bool = True, report: Callable[[str, str], None] | None = _say_failure) -> Loaded:
    """The built-ins and (with `discover`) every installed plugin, loaded once per process; each failure is
    reported once through `report(name, why)`."""
    if discover not in _cache:
        _cache[discover] = _load(discover)
        if report is not None:
            for name, why in _cache[discover].failures:
                report(name, why)
    return _cache[discover]


def forget() -> None:
    """Load again on the next `loaded()` (tests that install or remove a plugin)."""
    _cache.clear()


_T = TypeVar("_T")


def _find(provided: Callable[[Loaded], dict[str, _T]], name: str) -> _T | None:
    """What provides `name`: factreg's own without discovering plugins, else a plugin's (None: nothing does)."""
    own = provided(loaded(discover=False)).get(name)
    return own if own is not None else provided(loaded()).get(name)


def verifier(kind: str) -> Verifier | None:
    """The verifier of a method kind (a built-in one found without discovering plugins)."""
    return _find(lambda found: found.verifiers, kind)


def notifier(name: str) -> Notifier | None:
    """The notifier of that name (a built-in one found without discovering plugins)."""
    return _find(lambda found: found.notifiers, name)


def output_format(name: str) -> OutputFormat | None:
    """The output format of that name (a built-in one found without discovering plugins)."""
    return _find(lambda found: found.output_formats, name)


def _load(discover: bool) -> Loaded:
    import pluggy

    from factreg import __version__
    from factreg.plugins import builtins, hookspecs

    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    out = Loaded()
    pm.register(builtins, name=BUILTIN)
    found: list[tuple[Plugin, Any]] = [(Plugin(BUILTIN, "factreg", str(__version__), builtin=True), builtins)]
    if discover:
        from importlib import metadata

        for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            info = Plugin(ep.name, str(dist.metadata["Name"]) if dist else ep.value.split(":")[0],
                          str(dist.version) if dist else "?")
            if ep.name == BUILTIN or not NAME.fullmatch(ep.name):
                out.failures.append((ep.name, "a plugin name must be a lowercase word other than factreg"))
                continue
            try:
                module = ep.load()
                pm.register(module, name=ep.name)
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - someone else's code: name it, go on
                out.failures.append((f"{ep.name} ({info.distribution} {info.version})", one_line(exc)))
                continue
            found.append((info, module))
    for info, module in found:
        staged: dict[str, list[Any]] = {}
        try:
            for hook, (attr, cls, key) in HOOKS.items():
                for impl in getattr(pm.hook, hook).get_hookimpls():
                    if impl.plugin is module:
                        got: list[Any] = []
                        impl.function(**{a: got.append for a in impl.argnames if a == "register"})
                        kept = staged.setdefault(attr, [])
                        for x in got:
                            kept.append(_checked(x, cls, key, info.name, out, kept))
        except (Exception, SystemExit) as exc:  # noqa: BLE001
            pm.unregister(module)
            out.failures.append((f"{info.name} ({info.distribution} {info.version})", one_line(exc)))
            continue
        for attr, items in staged.items():
            for item in items:
                getattr(out, attr)[getattr(item, HOOKS_KEYS[attr])] = item
                info.provides.append(f"{attr[:-1].replace('_', ' ')}:{getattr(item, HOOKS_KEYS[attr])}")
        out.plugins.append(info)
    return out



def _checked(item: Any, cls: type, key: str, plugin: str, out: Loaded, staged: list[Any]) -> Any:
    """What a plugin registered, checked: the right dataclass, a valid name, not one already taken."""
    if not isinstance(item, cls):
        raise TypeError(f"registered {type(item).__name__}, not a {cls.__name__}")
    name = getattr(item, key)
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"{cls.__name__} name {str(name)[:40]!r} is not a lowercase word")
    attr = next(a for a, c, _ in HOOKS.values() if c is cls)
    taken = getattr(out, attr).get(name)
    if taken is not None or any(getattr(s, key) == name for s in staged):
        owner = taken.plugin if taken is not None else plugin
        raise ValueError(f"{cls.__name__} {name!r} is already provided by {owner}")
    registered: Any = item
    return replace(registered, plugin=plugin)
