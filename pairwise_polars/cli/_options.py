"""The CLI's option groups, each declared once: the commands share them."""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

from pairwise_polars._errors import DataSourceError, OptionError
from pairwise_polars.cli._gate_options import add_gate_options, gates_from
from pairwise_polars.cli._verdicts import threshold
from pairwise_polars.engine._bounds import CONNECT_TIMEOUT, MAX_CONCURRENCY, MAX_RESPONSE_BYTES
from pairwise_polars.engine._prices import Price, as_price, given_prices
from pairwise_polars.engine._wire import TRANSPORTS
from pairwise_polars.judges import Judge, Panel, build_judge
from pairwise_polars.judges._factory import PROVIDERS
from pairwise_polars.judges._panel import COMBINES
from pairwise_polars.pairing import Columns, PairingOptions, Strategy
from pairwise_polars.summary import (
    GateResult,
    summarize,
)

FIELDS = list(Columns.__dataclass_fields__)


# -- numbers: checked when parsed, so a bad flag is a usage error naming it (exit 2) -----------


def whole(minimum: int, maximum: int | None = None) -> Any:
    """An argparse type: an integer of at least ``minimum`` (and at most ``maximum``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {value}")
        return value

    return parse


def positive(text: str) -> float:
    """An argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text}")
    return value


def non_negative(text: str) -> float:
    """An argparse type: a finite number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of at least 0, got {text}")
    return value


def share(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (a confidence)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


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


# -- CI outputs and the manifest's trust --------------------------------------------------------


def add_ci_options(parser: argparse.ArgumentParser) -> None:
    """``--junit-xml PATH`` (the step summary needs no flag: ``$GITHUB_STEP_SUMMARY``)."""
    group = parser.add_argument_group("CI outputs")
    group.add_argument(
        "--junit-xml",
        metavar="PATH",
        help="write the gate checks as JUnit XML (one test case per check, one per metric for "
        "judge failures); with $GITHUB_STEP_SUMMARY set, the verdict and the summary table "
        "are also added to the GitHub Actions run page",
    )


def add_trust_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-key-env",
        action="append",
        default=[],
        metavar="NAME",
        help="let the manifest's api_key_env name this variable (by default only "
        "OPENAI_API_KEY and ANTHROPIC_API_KEY); repeatable",
    )


# -- cache -------------------------------------------------------------------------------------


def add_cache_options(parser: argparse.ArgumentParser | Any, *, what: str, default: str) -> None:
    """``--cache PATH`` / ``--no-cache`` for the ``what`` cache (its default location said in
    ``default``)."""
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache", metavar="PATH", help=f"{what} cache file (default: {default})")
    cache.add_argument(
        "--no-cache", action="store_true", help=f"neither read nor write the {what} cache"
    )


def cache_setting(args: argparse.Namespace, default: bool | None = True) -> bool | str | None:
    """``False`` with --no-cache, the --cache path, else ``default`` (None: the manifest's)."""
    if args.no_cache:
        return False
    return args.cache or default


# -- pairing -----------------------------------------------------------------------------------


def add_pairing_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("pairing")
    group.add_argument(
        "--strategy",
        choices=("group", "contrastive"),
        default="group",
        help="group: variants vs one reference per group; contrastive: pole_a "
        "rows vs pole_b rows (default: %(default)s)",
    )
    group.add_argument(
        "--reference",
        default="reference",
        metavar="ROLE",
        help="the reference role of the group strategy (default: %(default)s)",
    )
    group.add_argument(
        "--poles",
        nargs=2,
        default=("pole_a", "pole_b"),
        metavar=("A", "B"),
        help="the two roles of the contrastive strategy (default: pole_a pole_b)",
    )
    group.add_argument(
        "--control",
        default="control",
        metavar="ROLE",
        help="the role of control rows: a second answer to the reference's (or a pole A "
        "row's) input, paired with it to measure the noise floor (default: %(default)s)",
    )
    group.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="FIELD=NAME",
        help=f"map a column, repeatable; fields: {', '.join(FIELDS)} (e.g. "
        "--column group_by=prompt_id --column output=response)",
    )
    group.add_argument(
        "--on-invalid",
        choices=("raise", "skip"),
        default="raise",
        help="invalid groups stop the run, or are left out with a warning",
    )
    group.add_argument(
        "--storage-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an object-store option for s3://, gs://, az://, hf:// or https:// data, "
        "repeatable (e.g. --storage-option aws_region=eu-west-1); credentials are best left "
        "to the provider's environment variables",
    )


def pairing_from(args: argparse.Namespace) -> tuple[Strategy, PairingOptions]:
    """The strategy and the pairing keywords the pairing options ask for."""
    if args.strategy == "contrastive" and args.poles[0] == args.poles[1]:
        raise DataSourceError(f"--poles needs two different roles, got {args.poles[0]!r} twice.")
    names: dict[str, str] = {}
    for item in args.column:
        field, sep, name = item.partition("=")
        if not sep or field not in FIELDS or not name:
            raise DataSourceError(
                f"--column expects FIELD=NAME with FIELD one of {', '.join(FIELDS)}; got "
                f"{item!r}. Example: --column group_by=prompt_id."
            )
        names[field] = name
    options: PairingOptions = {
        "columns": Columns(**names),
        "reference": args.reference,
        "poles": tuple(args.poles),
        "control": args.control,
        "on_invalid": args.on_invalid,
        "storage_options": storage_options_from(args),
    }
    return args.strategy, options


def storage_options_from(args: argparse.Namespace) -> dict[str, str] | None:
    """``--storage-option KEY=VALUE`` flags as a mapping (None when there are none)."""
    options: dict[str, str] = {}
    for item in getattr(args, "storage_option", None) or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise DataSourceError(  # the value is not echoed: it may be a secret
                "--storage-option expects KEY=VALUE, e.g. --storage-option "
                "aws_endpoint_url=http://127.0.0.1:9000."
            )
        options[key.strip()] = value
    return options or None


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


# -- summary and gates -------------------------------------------------------------------------


def add_summary_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("summary")
    group.add_argument(
        "--by",
        nargs="*",
        action="extend",
        metavar="COLUMN",
        help="slice columns, repeatable (--by a b, or --by a --by b; default: dimension when "
        "the data has it; --by alone: overall only)",
    )
    group.add_argument(
        "--group-by",
        default="group_id",
        metavar="COLUMN",
        help="the group column (for intervals; default: %(default)s)",
    )
    group.add_argument("--equivalence-threshold", type=threshold, default=0.0, metavar="X")
    group.add_argument("--divergence-threshold", type=threshold, default=0.5, metavar="X")
    group.add_argument("--confidence", type=share, default=0.95, metavar="X")
    group.add_argument(
        "--labels",
        metavar="FILE",
        help="human labels of pairs (pair_id, metric, label; `label-sample` writes the file to "
        "fill in): adds the prediction-powered figures (*_ppi), which the gates then use",
    )
    add_gate_options(parser)


def summary_from(scored: Any, args: argparse.Namespace) -> tuple[Any, GateResult | None]:
    """The summary the summary options ask for, and the gates' verdict when any gate is set."""
    summary = summarize(
        scored,
        args.by,
        equivalence_threshold=args.equivalence_threshold,
        divergence_threshold=args.divergence_threshold,
        confidence=args.confidence,
        group_by=args.group_by,
        labels=args.labels,
    )
    return summary, gates_from(summary, scored, args)
