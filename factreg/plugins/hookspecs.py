"""The hooks a factreg plugin implements (pluggy, project name and entry-point group `factreg`).

Each hook receives `register`, a function the plugin calls once per thing it provides, with the dataclasses of
`factreg.plugins` (`Verifier`, `Importer`, `OutputFormat`, `Notifier`). factreg's own verifiers, importers, formats
and notifiers are registered through the same hooks (`factreg/plugins/builtins.py`).

A plugin module::

    from factreg.plugins import Verifier, hookimpl

    @hookimpl
    def register_verifiers(register):
        register(Verifier("hyperfine", "factreg_hyperfine:remeasure", measures="wall_time (s)"))

and, in its pyproject.toml, `[project.entry-points.factreg] hyperfine = "factreg_hyperfine"`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("factreg")
hookimpl = pluggy.HookimplMarker("factreg")


@hookspec
def register_verifiers(register: Callable[[Any], None]) -> None:
    """Register method kinds `verify` can re-run: `register(Verifier(kind, remeasure, ...))`."""


@hookspec
def register_importers(register: Callable[[Any], None]) -> None:
    """Register result-file formats `import` reads: `register(Importer(name, description, read, recognise))`."""


@hookspec
def register_output_formats(register: Callable[[Any], None]) -> None:
    """Register `--format` names for findings: `register(OutputFormat(name, description, render))`."""


@hookspec
def register_notifiers(register: Callable[[Any], None]) -> None:
    """Register alert channels for `verify --notify`: `register(Notifier(name, description, send))`."""
