"""The entry point (`factreg`, `python -m factreg`): a shell completing a word (`_FACTREG_COMPLETE` set) is
answered before the command line, typer and SQLAlchemy are imported (factreg/complete.py)."""

import os
import sys


def main() -> None:
    if os.environ.get("_FACTREG_COMPLETE"):
        from factreg import complete

        sys.exit(complete.main())
    from factreg.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
