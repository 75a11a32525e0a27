"""The ``ember`` command (also ``python -m ember``).

ember run SCRIPT [ARGS...]     run an unmodified PyTorch script on ember (drop-in mode)
ember run -m MODULE [ARGS...]  the same for a module, as ``python -m MODULE``
ember --version
"""

from __future__ import annotations

import sys

USAGE = """\
usage: ember run SCRIPT [ARGS...]
       ember run -m MODULE [ARGS...]
       ember --version

Run an unmodified PyTorch script on ember: `import torch` (and torch.nn, torch.optim,
torch.utils.data, ...) imports ember. The script runs as __main__ with its folder on sys.path and
sys.argv = [SCRIPT, *ARGS]; its exit status is ember's.
"""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ember`` console command; returns the exit status."""
    args = sys.argv[1:] if argv is None else list(argv)
    prog = "ember"
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE, end="", file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        from . import __version__

        print(f"ember {__version__}")
        return 0
    if args[0] != "run":
        print(USAGE, end="", file=sys.stderr)
        print(f"{prog}: error: unknown command {args[0]!r} (expected 'run')", file=sys.stderr)
        return 2
    rest = args[1:]
    if rest and rest[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0
    from . import dropin

    if rest and rest[0] == "-m":
        if len(rest) < 2:
            print(f"{prog} run: error: argument -m expects a module name", file=sys.stderr)
            return 2
        return dropin.run_module(rest[1], rest[2:])
    if not rest:
        print(USAGE, end="", file=sys.stderr)
        print(f"{prog} run: error: the following arguments are required: SCRIPT", file=sys.stderr)
        return 2
    return dropin.run_script(rest[0], rest[1:], prog=f"{prog} run")


if __name__ == "__main__":
    sys.exit(main())
