"""The entry point (`factreg`, `python -m factreg`): a shell completing a word (`_FACTREG_COMPLETE` set) and
`factreg --version` are answered before the command line, typer and SQLAlchemy are imported (factreg/complete.py,
`_version`), and so are the plain forms of `docs lint`, `docs check`, `cite`, `status` and `list`
(factreg/cli/quick.py); everything else goes to the command line, which builds only the command named (factreg/cli)."""

import os
import sys


def _version(args: list[str]) -> bool:
    """`factreg [--db X] --version`: the version line, read with sqlite3; False when another path must answer (a
    configuration error is reported by the command line, with its exit code)."""
    db = None
    if args[:1] == ["--db"] and len(args) == 3:
        db, args = args[1], args[2:]
    elif args[:1] and args[0].startswith("--db=") and len(args) == 2:
        db, args = args[0][5:], args[1:]
    if args != ["--version"]:
        return False
    from factreg import config
    from factreg.registry.store import version_line

    try:
        line, _ = version_line(config.resolve(db).db_url)
    except Exception:  # noqa: BLE001 - the command line says what is wrong, as for any command
        return False
    sys.stdout.write(line + "\n")
    return True


def main() -> None:
    if os.environ.get("_FACTREG_COMPLETE"):
        from factreg import complete

        sys.exit(complete.main())
    if "--version" in sys.argv[1:4] and _version(sys.argv[1:]):
        return
    if sys.argv[1:2] in (["docs"], ["cite"], ["status"], ["list"]):  # quick._PLAIN's first words, before importing it
        from factreg.cli import quick

        code = quick.main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    from factreg.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
