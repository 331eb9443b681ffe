"""The CLI's option groups, each declared once: the commands share them."""

from __future__ import annotations

import argparse
from typing import Any

from pairwise_polars._errors import DataSourceError
from pairwise_polars.cli._gate_options import add_gate_options, gates_from
from pairwise_polars.cli._numbers import share, whole
from pairwise_polars.cli._verdicts import threshold
from pairwise_polars.pairing import Columns, PairingOptions, Strategy
from pairwise_polars.summary import (
    GateResult,
    summarize,
)

FIELDS = list(Columns.__dataclass_fields__)


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


# -- the report --------------------------------------------------------------------------------


def add_top_option(parser: argparse.ArgumentParser, *, where: str = "") -> None:
    """``--top N``: the most divergent pairs the report shows per metric (``where``: said after
    "per metric" in the help)."""
    parser.add_argument(
        "--top",
        type=whole(0),
        default=5,
        metavar="N",
        help=f"most divergent pairs shown per metric{where} (default: 5)",
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
    summary = summarize(scored, args.by, labels=args.labels, **interval_settings(args))
    return summary, gates_from(summary, scored, args)


def interval_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The thresholds, confidence and group column of the figures and their intervals, under
    the keywords ``summarize``, ``scoped_stability`` and ``compare`` share."""
    return {
        "equivalence_threshold": args.equivalence_threshold,
        "divergence_threshold": args.divergence_threshold,
        "confidence": args.confidence,
        "group_by": args.group_by,
    }
