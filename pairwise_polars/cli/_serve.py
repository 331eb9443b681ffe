"""``serve-test-judge``: the local OpenAI-compatible test server, to try the LLM path keyless."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    serve = subparsers.add_parser(
        "serve-test-judge",
        add_help=False,
        help="serve a local OpenAI-compatible test judge (try the LLM path without a key)",
        description="Serve pairwise_polars.testing's deterministic OpenAI-compatible judge "
        "until Ctrl-C. Every option goes to it: see `serve-test-judge --help`.",
    )
    serve.set_defaults(handler=_serve, passthrough=True, quiet=False, json=False, debug=False)


def _serve(args: argparse.Namespace, console: Any) -> int:
    from pairwise_polars.testing import serve

    try:
        return serve(list(args.extra))
    except SystemExit as exc:  # its own --help or a usage error
        return exc.code if isinstance(exc.code, int) else 2
