"""Command: completion — print the shell completion script for bash, zsh or fish."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from factreg.cli.common import handles_errors

# What each shell runs on TAB: `_FACTREG_COMPLETE=SHELL factreg WORD... INCOMPLETE`, answered by factreg/complete.py.
SCRIPTS = {
    "bash": """\
# factreg completion for bash: eval "$(factreg completion bash)" in ~/.bashrc
_factreg_complete() {
    local line
    COMPREPLY=()
    # one candidate a line, taken as it is: no word splitting, no glob expansion (factreg quotes what needs it)
    while IFS= read -r line; do
        COMPREPLY+=("$line")
    done < <(_FACTREG_COMPLETE=bash "${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
}
complete -o default -F _factreg_complete factreg
""",
    "zsh": """\
#compdef factreg
# factreg completion for zsh: eval "$(factreg completion zsh)" in ~/.zshrc (after compinit)
_factreg() {
    local -a candidates
    candidates=("${(@f)$(_FACTREG_COMPLETE=zsh "${words[1]}" "${(@)words[2,$CURRENT]}" 2>/dev/null)}")
    (( ${#candidates} )) && [[ -n ${candidates[1]} ]] && compadd -- "${candidates[@]}" || _files
}
compdef _factreg factreg
""",
    "fish": """\
# factreg completion for fish: factreg completion fish > ~/.config/fish/completions/factreg.fish
function __factreg_complete
    set -l tokens (commandline -opc)
    env _FACTREG_COMPLETE=fish $tokens[1] $tokens[2..-1] (commandline -ct) 2>/dev/null
end
complete -c factreg -f -a '(__factreg_complete)'
""",
}


def register(app: typer.Typer) -> None:
    app.command("completion")(completion)


@handles_errors
def completion(
    shell: Annotated[str, typer.Argument(metavar="bash|zsh|fish", help="The shell to complete in.")],
) -> None:
    """Print the shell completion script (commands, options, fact ids and metric names from the registry).

    bash: eval "$(factreg completion bash)" in ~/.bashrc; zsh: eval "$(factreg completion zsh)" in ~/.zshrc;
    fish: factreg completion fish > ~/.config/fish/completions/factreg.fish"""
    from factreg.errors import UsageError

    if shell not in SCRIPTS:
        raise UsageError(f"completion: no script for {shell[:40]!r}; choose bash, zsh or fish")
    sys.stdout.write(SCRIPTS[shell])


def option_names(app: typer.Typer, path: list[str]) -> list[str]:
    """The option names of the command at `path` (`["docs", "check"]`), for completing a word that starts with -."""
    import typer.main

    cmd: Any = typer.main.get_command(app)
    for name in path:
        cmd = getattr(cmd, "commands", {}).get(name)
        if cmd is None:
            return []
    names: list[str] = []
    for param in cmd.params:
        if not getattr(param, "hidden", False) and param.param_type_name == "option":
            names += [*param.opts, *param.secondary_opts]
    return [*names, "--help"]
