"""The CLI's judge options: which judge, how it is reached, the engine's limits, prices."""

from __future__ import annotations

import argparse
import os
from typing import Any

from pairwise_polars._errors import OptionError
from pairwise_polars.cli._numbers import non_negative, positive, whole
from pairwise_polars.engine._bounds import CONNECT_TIMEOUT, MAX_CONCURRENCY, MAX_RESPONSE_BYTES
from pairwise_polars.engine._prices import Price, as_price, given_prices
from pairwise_polars.engine._wire import TRANSPORTS
from pairwise_polars.judges import Judge, Panel, build_judge
from pairwise_polars.judges._factory import PROVIDERS
from pairwise_polars.judges._panel import COMBINES


def price(text: str) -> Price:
    """An argparse type: ``IN,OUT`` or ``IN,CACHED,OUT`` US dollars per million tokens."""
    try:
        numbers = [float(part) for part in text.split(",")]
        return as_price(numbers, name="--price-per-million")
    except (ValueError, OptionError):
        raise argparse.ArgumentTypeError(
            f"expected IN,OUT or IN,CACHED,OUT in US dollars per million tokens (e.g. "
            f"0.15,0.60 or 0.15,0.075,0.60), got {text!r}"
        ) from None


def add_price_option(group: Any) -> None:
    """``--price-per-million``: the judge model's price, over the shipped table."""
    group.add_argument(
        "--price-per-million",
        type=price,
        metavar="IN,OUT",
        help="the judge model's price in US dollars per million tokens, IN,OUT or "
        "IN,CACHED,OUT (default: the shipped, dated prices file; other models: price "
        "unknown)",
    )
    group.add_argument(
        "--prices",
        metavar="FILE",
        help="a prices file (CSV: provider, model, input, cached_input, output, "
        "batch_discount, as_of, retires) laid over the shipped one",
    )


# -- requests: the judge, and the engine's limits ----------------------------------------------


def add_request_options(group: Any, *, retries: bool = False) -> None:
    """Concurrency and rate limits (and, with ``retries``, the timeout and retries)."""
    group.add_argument(
        "--max-concurrency",
        type=whole(1, MAX_CONCURRENCY),
        metavar="N",
        help=f"requests in flight, at most {MAX_CONCURRENCY} (default: 32)",
    )
    group.add_argument("--requests-per-minute", type=positive, metavar="N")
    group.add_argument("--tokens-per-minute", type=positive, metavar="N")
    group.add_argument(
        "--transport",
        choices=TRANSPORTS,
        help="fast: post over aiohttp directly (the default); sdk: through the openai SDK",
    )
    if retries:
        group.add_argument(
            "--timeout",
            type=positive,
            metavar="SECONDS",
            help="per attempt, connect to last byte (default: 60)",
        )
        group.add_argument(
            "--connect-timeout",
            type=positive,
            metavar="SECONDS",
            help=f"to open a connection (default: {CONNECT_TIMEOUT:g})",
        )
        group.add_argument(
            "--max-response-bytes",
            type=whole(1024),
            metavar="N",
            help=f"largest answer read; a larger one is an error row (default: "
            f"{MAX_RESPONSE_BYTES})",
        )
        group.add_argument(
            "--max-retries",
            type=whole(0),
            metavar="N",
            help="retries of 429/5xx/timeouts (default: 6)",
        )
        group.add_argument(
            "--max-retry-wait",
            type=non_negative,
            metavar="SECONDS",
            help="longest Retry-After to honour; a longer one fails the request (default: 60)",
        )


def request_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The request options given on the command line (the others keep their defaults)."""
    names = (
        "max_concurrency",
        "requests_per_minute",
        "tokens_per_minute",
        "timeout",
        "connect_timeout",
        "max_response_bytes",
        "max_retries",
        "max_retry_wait",
        "transport",
        "poll_interval",
    )
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("judge")
    group.add_argument(
        "--judge",
        action="append",
        metavar="heuristic|MODEL",
        help="heuristic (the key-free heuristic judge; 'offline' is an alias) or the model of "
        "an OpenAI-compatible endpoint, or of Anthropic's with --judge-provider anthropic "
        "(default: heuristic); repeat it for a panel (--judge a --judge b --judge c: every "
        "request to every judge, the same endpoint and settings)",
    )
    group.add_argument(
        "--combine",
        choices=COMBINES,
        default="mean",
        help="how a panel's scores are combined (default: %(default)s; majority: the "
        "commonest answer, a tie to the larger)",
    )
    group.add_argument(
        "--repeats",
        type=whole(1),
        default=1,
        metavar="K",
        help="ask the judge K times per request (distinct seeds; the repeat index in the cache "
        "key): adds judge_repeat_sd to the summary (default: 1)",
    )
    group.add_argument(
        "--judge-provider",
        choices=PROVIDERS,
        default="openai",
        help="the API the judge model speaks: openai (any OpenAI-compatible endpoint) or "
        "anthropic (the Messages API; key from ANTHROPIC_API_KEY) (default: %(default)s)",
    )
    add_endpoint_options(group, default_env=None)
    group.add_argument(
        "--batch",
        action="store_true",
        help="send the judge requests through the provider's Batch API (half price, within 24h)",
    )
    group.add_argument(
        "--poll-interval",
        type=positive,
        metavar="SECONDS",
        help="with --batch: seconds between the first checks on the batches, growing 1.5x per "
        "check up to 300 (default: 15)",
    )
    group.add_argument(
        "--score-from",
        choices=("answer", "logprobs"),
        help="answer: the score the judge wrote (the default); logprobs: the rubric's "
        "expectation over the score token's log-probabilities (OpenAI-compatible judges that "
        "return them, chat or --batch; a reply without them keeps its written score and "
        "score_source says so)",
    )
    add_price_option(group)
    add_request_options(group)


def add_endpoint_options(group: Any, default_env: str | None = "OPENAI_API_KEY") -> None:
    """Where the model is and which environment variable holds its key (``default_env`` None:
    the provider's own variable)."""
    group.add_argument("--base-url", help="the endpoint (default: OpenAI's); e.g. a vLLM server")
    group.add_argument(
        "--api-key-env",
        default=default_env,
        metavar="NAME",
        help="environment variable holding the key (default: "
        + (default_env or "OPENAI_API_KEY, or ANTHROPIC_API_KEY for --judge-provider anthropic")
        + ")",
    )


def judge_from(args: argparse.Namespace) -> Judge | Panel:
    """The judge the judge options name (the same factory as the manifest's); a panel when
    ``--judge`` is repeated."""
    provider = getattr(args, "judge_provider", "openai")
    env = args.api_key_env or ("ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY")
    judges = [
        build_judge(
            model,
            provider=provider,
            batch=args.batch,
            api_key=os.environ.get(env),
            base_url=args.base_url,
            score_from=getattr(args, "score_from", None),
            **request_settings(args),
        )
        for model in (args.judge or ["heuristic"])
    ]
    if len(judges) == 1:
        return judges[0]
    return Panel(judges, combine=getattr(args, "combine", "mean"))


def prices_from(args: argparse.Namespace, model: str | None) -> dict[str, Price]:
    """The prices of ``--prices`` FILE, and the one ``--price-per-million`` gives ``model``."""
    from_file = given_prices(getattr(args, "prices", None))
    given = getattr(args, "price_per_million", None)
    return {**from_file, model: given} if given is not None and model else from_file
