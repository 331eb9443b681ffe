"""``python -m pairwise_polars.testing``: serve the test judge until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import fields

from ._faults import FAULT_NAMES, Faults
from ._judge_behaviours import BEHAVIOURS
from ._server import TestServer


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pairwise_polars.testing",
        description="Serve a local OpenAI-compatible chat endpoint (a deterministic test judge) "
        "with injectable faults, until Ctrl-C.",
    )
    add = parser.add_argument
    add("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    add("--port", type=int, default=8000, help="port; 0 picks a free one (default: %(default)s)")
    add("--latency", type=float, default=0.0, help="seconds before each answer (default: 0)")
    add("--api-key", default=None, help="require this bearer key (default: accept any)")
    add(
        "--model",
        action="append",
        dest="models",
        metavar="NAME",
        help="accept only this model; repeat for several (default: any)",
    )
    add("--seed", type=int, default=0, help="seed of the fault draws (default: 0)")
    add(
        "--no-json-schema",
        action="store_true",
        help="answer response_format json_schema with a 400, like older servers",
    )
    add(
        "--behaviour",
        choices=BEHAVIOURS,
        default=None,
        help="how judge requests are scored instead of the stable hash (default: the hash)",
    )
    faults = parser.add_argument_group("faults (rates are per request, in [0, 1])")
    for name in ("429", "500", "timeout", "malformed", "off-rubric", "connection-drop"):
        faults.add_argument(f"--rate-{name}", type=float, default=0.0, metavar="RATE")
    faults.add_argument(
        "--retry-after",
        type=float,
        default=0.05,
        metavar="SECONDS",
        help="Retry-After of a 429 (default: %(default)s)",
    )
    faults.add_argument(
        "--timeout-delay",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long a timeout fault stalls (default: %(default)s)",
    )
    faults.add_argument(
        "--always", choices=FAULT_NAMES, default=None, help="apply this fault to every request"
    )
    return parser


def serve(argv: Sequence[str] | None = None) -> int:
    """Run the test server from command-line arguments; prints its base_url, blocks until
    Ctrl-C (or SIGTERM) and returns the exit status.

    Example:
        ``serve(["--port", "8000", "--latency", "0.05", "--rate-429", "0.05"])``
    """
    args = _parser().parse_args(argv)
    try:
        # The fault flags are named as Faults' fields (retry_after_header has no flag).
        flags = vars(args)
        faults = Faults(**{f.name: flags[f.name] for f in fields(Faults) if f.name in flags})
        server = TestServer(
            latency=args.latency,
            faults=faults,
            api_key=args.api_key,
            models=args.models,
            seed=args.seed,
            supports_json_schema=not args.no_json_schema,
            host=args.host,
            port=args.port,
            behaviour=args.behaviour,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    done = threading.Event()
    # Both signals are handled explicitly: a shell starts background jobs with SIGINT ignored,
    # and process managers and benchmarks stop servers with SIGTERM.
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda *_: done.set()) for sig in handled}
    try:
        with server:
            print(server.base_url, flush=True)
            done.wait()
            stats = server.stats
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    outcomes = ", ".join(f"{k}={v}" for k, v in sorted(stats.outcomes.items())) or "none"
    print(f"served {stats.requests} requests ({outcomes})", file=sys.stderr, flush=True)
    return 0
