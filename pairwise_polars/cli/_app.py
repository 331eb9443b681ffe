"""The ``pairwise-polars`` program: argument parsing, the command registry, exit codes.

A command lives in its own module with ``register(subparsers, common)``, which adds its parser
and sets ``handler=`` (a function ``(args, console) -> exit code``). To add a command, write the
module and list it in ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import sys
import traceback
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from pairwise_polars._advice import Dialect, say
from pairwise_polars._errors import EmptyDataWarning, PairwiseError, PairwiseWarning
from pairwise_polars._version import __version__
from pairwise_polars.cli import (
    _compare_command,
    _counterfactual,
    _data_commands,
    _disparity_command,
    _label_commands,
    _manifest_commands,
    _serve,
    _summary_commands,
)
from pairwise_polars.cli._console import Console
from pairwise_polars.cli._verdicts import EXIT_INCONCLUSIVE as EXIT_INCONCLUSIVE  # 4: no verdict

EXIT_PASS = 0
"""Every gate passed (or the command had nothing to gate)."""
EXIT_GATE_FAILED = 1
"""A fairness gate failed: the run worked and the system under test did not meet a threshold."""
EXIT_INVALID = 2
"""Invalid input or configuration: a manifest problem, a missing file, bad data, bad flags."""
EXIT_CRASH = 3
"""An unexpected error: a bug or an unhandled case (rerun with --debug for the traceback)."""
EXIT_INTERRUPTED = 130

COMMANDS: tuple[ModuleType, ...] = (
    _manifest_commands,
    _data_commands,
    _summary_commands,
    _disparity_command,
    _compare_command,
    _label_commands,
    _counterfactual,
    _serve,
)
"""Modules that register subcommands, in the order ``--help`` lists them."""


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error said in one line (the flag and what is wrong), like every
    other error of the program, instead of the whole usage text."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INVALID, f"Error: {self.prog}: {message}. See {self.prog} --help.\n")


def _common(suppress: bool) -> argparse.ArgumentParser:
    """Options accepted before or after the command name. On subcommands their default is
    SUPPRESS, so a subparser never overwrites a value given before the command."""
    common = argparse.ArgumentParser(add_help=False)
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if suppress else {}
    group = common.add_argument_group("output")
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the verdict and errors (no plan, tables or progress)",
        **default,
    )
    group.add_argument(
        "--json",
        action="store_true",
        help="print one machine-readable JSON document on stdout",
        **default,
    )
    group.add_argument(
        "--debug", action="store_true", help="show the traceback of an error", **default
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pairwise-polars",
        parents=[_common(suppress=False)],
        description="Counterfactual fairness testing of LLM outputs: form pairs, judge them, "
        "summarise by slice, and gate a CI job on the result.",
        epilog="Exit codes: 0 every gate passed, 1 a fairness gate failed, 2 invalid input or "
        "configuration, 3 unexpected error, 4 no verdict (judgements failed beyond "
        "max_error_rate, or nothing was scored).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = _common(suppress=True)
    for module in COMMANDS:
        module.register(subparsers, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and not getattr(args, "passthrough", False):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # --help, --version, or a usage error (argparse says exit 2)
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_INVALID
    args.extra = extra
    console = Console(quiet=args.quiet, json_mode=args.json)
    code = _dispatch(args, console)
    console.emit_json(code)
    return code


def _dispatch(args: argparse.Namespace, console: Console) -> int:
    dialect: Dialect = "manifest" if getattr(args, "dialect", "cli") == "manifest" else "cli"
    shown: set[str] = set()

    def show(message: Warning | str, *_: Any, **__: Any) -> None:
        text = say(message, dialect) if isinstance(message, Warning) else str(message)
        if text not in shown:  # a warning repeated by each chunk or step is said once
            shown.add(text)
            console.warn(text)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default", PairwiseWarning)
            warnings.simplefilter("error", EmptyDataWarning)  # nothing to do is an input error
            warnings.showwarning = show
            return int(args.handler(args, console))
    except KeyboardInterrupt:
        console.error("interrupted.")
        return EXIT_INTERRUPTED
    except (PairwiseError, EmptyDataWarning, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        message = say(exc, dialect)
        console.payload["error"] = message
        console.error(message)
        return EXIT_INVALID
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        message = f"unexpected {type(exc).__name__}: {exc}".splitlines()[0]
        console.payload["error"] = message
        console.error(message, hint=None if args.debug else "Run with --debug for the traceback.")
        return EXIT_CRASH
