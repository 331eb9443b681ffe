"""``counterfactual`` and ``respond``: from a table of prompts to grouped rows, and from grouped
rows to the system under test's responses, ready for ``score``."""

from __future__ import annotations

import argparse
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from pairwise_polars._errors import DataSourceError
from pairwise_polars.cli._console import Console, markdown_table
from pairwise_polars.cli._judge_options import (
    add_endpoint_options,
    add_request_options,
    request_settings,
)
from pairwise_polars.cli._options import add_cache_options, cache_setting
from pairwise_polars.cli._output_paths import FRAME_FORMATS, check_outputs, one_or_many
from pairwise_polars.io import scan_data, write_frame

_MAX_ERRORS_SHOWN = 3
_ROWS, _SKIPPED = "the grouped rows (-o)", "the prompts left out (--skipped)"
_ANSWERED = "the rows with responses (-o)"


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    _register_counterfactual(subparsers, common)
    _register_respond(subparsers, common)


def _register_counterfactual(subparsers: Any, common: argparse.ArgumentParser) -> None:
    make = subparsers.add_parser(
        "counterfactual",
        parents=[common],
        help="make counterfactual variants of prompts (grouped rows for `respond`)",
        description="Copy each prompt once per attribute value of each dimension (pronouns, "
        "gendered words, names, group words substituted from the shipped lexicons or yours) "
        "and write the grouped rows: group_id, role, dimension, attribute, input, "
        "substitutions, and the prompts' other columns.",
    )
    make.add_argument(
        "prompts",
        nargs="+",
        metavar="PROMPTS",
        help="prompt file(s): .csv, .jsonl/.ndjson, .json or parquet "
        "(parquet also as a folder or glob)",
    )
    make.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="FILE",
        help=f"the grouped rows to write ({FRAME_FORMATS})",
    )
    options = make.add_argument_group("variants")
    _variant_options(options)
    _subject_options(options)
    _value_options(options)
    make.add_argument(
        "--skipped",
        metavar="FILE",
        help=f"write the prompts and variants left out, with the reason ({FRAME_FORMATS})",
    )
    make.set_defaults(handler=_counterfactual)


def _variant_options(options: Any) -> None:
    """Which dimensions vary, in which prompt column, around which reference."""
    options.add_argument(
        "-d",
        "--dimension",
        action="append",
        metavar="NAME",
        help="a dimension to vary, repeatable (default: gender and race); "
        f"shipped: {', '.join(_shipped_dimensions())}",
    )
    options.add_argument(
        "--strategy",
        choices=("group", "contrastive"),
        default="group",
        help="group: the prompt as reference plus one variant per other value; "
        "contrastive: the prompt moved to two poles (default: %(default)s)",
    )
    _text_option(options)
    options.add_argument(
        "--id-column",
        metavar="COLUMN",
        help="a column identifying each prompt (default: its position)",
    )
    options.add_argument(
        "--neutral-reference",
        action="store_true",
        help="group strategy: the reference is the prompt's neutral form "
        "(they/them, 'person', the group word removed)",
    )


def _subject_options(options: Any) -> None:
    """Whose words change, and how: the subject, their partner, group words, the control."""
    options.add_argument(
        "--scope",
        choices=("subject", "all"),
        default="subject",
        help="subject: change only the words of the person the prompt is about; all: every "
        "term of the dimension (default: %(default)s)",
    )
    options.add_argument(
        "--relations",
        choices=("swap", "keep"),
        default="swap",
        help="gender: the subject's partner (his wife) moves with the subject (swap: her "
        "husband) or stays as written (keep: her wife); listed in the audit either way "
        "(default: %(default)s)",
    )
    options.add_argument(
        "--subject",
        metavar="PHRASE",
        help="the subject's name or phrase as written in the prompts (default: the "
        "first-mentioned person)",
    )
    options.add_argument(
        "--case-style",
        choices=("capitalized", "ap", "lowercase"),
        default="capitalized",
        help="racial group words: White/Black, white/Black (AP) or white/black "
        "(default: %(default)s)",
    )
    options.add_argument(
        "--no-control",
        action="store_true",
        help="no control row (by default each group gets one: a copy of its reference, "
        "or of pole_a, answered again to measure the noise floor)",
    )


def _value_options(options: Any) -> None:
    """Placeholders, the values and poles of a dimension, and the lexicons they come from."""
    options.add_argument(
        "--placeholders",
        action="store_true",
        help="prompts mark where the attribute goes: {name}, {they}, {group}, {race:group}, ...",
    )
    options.add_argument(
        "--values",
        action="append",
        default=[],
        metavar="DIM=A,B,...",
        help="group strategy: the values of a dimension, repeatable",
    )
    options.add_argument(
        "--poles",
        action="append",
        default=[],
        metavar="DIM=A,B",
        help="contrastive strategy: the two poles of a dimension, repeatable",
    )
    options.add_argument(
        "--fill",
        action="append",
        default=[],
        metavar="DIM=VALUE",
        help="placeholders of a dimension not varied take this value",
    )
    options.add_argument(
        "--lexicon",
        metavar="PATH",
        help="your lexicon file or folder; its dimensions replace the shipped "
        "ones of the same name",
    )
    options.add_argument(
        "--add-lexicon",
        metavar="PATH",
        help="your lexicon file or folder whose terms are added to the dimensions "
        "(names, words, new dimensions)",
    )


def _register_respond(subparsers: Any, common: argparse.ArgumentParser) -> None:
    respond = subparsers.add_parser(
        "respond",
        parents=[common],
        help="collect the system under test's responses to grouped rows",
        description="Send every row's prompt to an OpenAI-compatible chat model (the system "
        "under test) and write the rows with output, error, response_model, attempts, "
        "latency_s, token counts and cached (and sample, with --samples). A failed generation "
        "is a row with a null output and the error: it is never judged.",
    )
    respond.add_argument(
        "runs",
        nargs="+",
        metavar="RUNS",
        help="the rows (from `counterfactual`): parquet, .csv, .jsonl or .json",
    )
    respond.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="FILE",
        help=f"the rows with outputs to write ({FRAME_FORMATS})",
    )
    _system_options(respond.add_argument_group("system under test"))
    engine = respond.add_argument_group("requests")
    add_request_options(engine, retries=True)
    add_cache_options(engine, what="response", default="the user cache folder")
    respond.set_defaults(handler=_respond)


def _system_options(target: Any) -> None:
    """The system under test: model, endpoint, prompt, draws and sampling."""
    target.add_argument("--model", required=True, help="the model name sent to the endpoint")
    add_endpoint_options(target)
    prompt = target.add_mutually_exclusive_group()
    prompt.add_argument("--system-prompt", metavar="TEXT", help="sent first in every chat")
    prompt.add_argument(
        "--system-prompt-file", metavar="FILE", help="the system prompt, read from a UTF-8 file"
    )
    target.add_argument(
        "--samples",
        type=int,
        default=1,
        metavar="N",
        help="draws per row (default: 1); group strategy: draw k of each "
        "variant pairs with draw k of its reference",
    )
    target.add_argument("--temperature", type=float, default=1.0, help="(default: %(default)s)")
    target.add_argument(
        "--max-tokens", type=int, default=1024, metavar="N", help="(default: %(default)s)"
    )
    target.add_argument("--seed", type=int, help="draw k sends seed + k")
    _text_option(target)
    target.add_argument(
        "--strategy",
        choices=("group", "contrastive"),
        help="how the rows will be paired (default: group when a row has role "
        "'reference'); decides how draws are grouped",
    )


def _text_option(group: Any) -> None:
    """``--text COLUMN``: the prompt column, the same for the prompts and the grouped rows."""
    group.add_argument(
        "--text", default="input", metavar="COLUMN", help="the prompt column (default: %(default)s)"
    )


def _counterfactual(args: argparse.Namespace, console: Console) -> int:
    from pairwise_polars.counterfactual import counterfactuals

    if args.subject is not None and args.scope != "subject":
        raise DataSourceError("--subject names whose words change; it needs --scope subject.")
    check_outputs(args.prompts, {_ROWS: args.out, _SKIPPED: args.skipped})
    prompts = read_table(args.prompts, "PROMPTS")
    dimensions = args.dimension or ["gender", "race"]
    result = counterfactuals(
        prompts, dimensions, strategy=args.strategy, text=args.text, id_column=args.id_column,
        values=_assignments(args.values, "--values") or None,
        poles={d: _pair(d, v) for d, v in _assignments(args.poles, "--poles").items()} or None,
        fill={d: v[0] for d, v in _assignments(args.fill, "--fill", single=True).items()},
        neutral_reference=args.neutral_reference, placeholders=args.placeholders,
        lexicons=args.lexicon, add_lexicons=args.add_lexicon, control=not args.no_control,
        scope=args.scope, relations=args.relations,
        subject=args.subject, case_style=args.case_style, report=True,
    )  # fmt: skip
    rows, skipped = result.frame, result.skipped
    write_frame(rows, args.out, what=_ROWS)
    if args.skipped:
        write_frame(skipped, args.skipped, what=_SKIPPED)
    made = rows.group_by("dimension").agg(groups=pl.col("group_id").n_unique(), rows=pl.len())
    left = skipped.group_by("dimension").agg(left_out=pl.len())
    counts = (
        pl.DataFrame({"dimension": dimensions}, schema={"dimension": pl.String})
        .join(made, on="dimension", how="left", maintain_order="left")
        .join(left, on="dimension", how="left", maintain_order="left")
        .with_columns(pl.col("groups", "rows", "left_out").fill_null(0).cast(pl.Int64))
    )
    console.payload.update(
        output=args.out, n_prompts=prompts.height, n_rows=rows.height,
        n_groups=rows["group_id"].n_unique(), n_skipped=skipped.height,
        dimensions={d: {"groups": g, "rows": r, "left_out": s} for d, g, r, s in counts.rows()},
    )  # fmt: skip
    console.info(markdown_table(counts))
    if skipped.height:
        where = f" (see {args.skipped})" if args.skipped else " (--skipped FILE lists them)"
        reasons = skipped.group_by("reason").len().sort("len", descending=True)
        console.warn(
            f"{skipped.height} prompt(s) or variant(s) left out{where}; most common: "
            f"{reasons['reason'][0]!r} ({reasons['len'][0]}x)."
        )
    console.verdict(
        f"{rows.height:,} rows in {rows['group_id'].n_unique():,} groups from "
        f"{prompts.height:,} prompt{'' if prompts.height == 1 else 's'} -> {args.out}"
    )
    return 0


def _respond(args: argparse.Namespace, console: Console) -> int:
    from pairwise_polars.counterfactual import OpenAITarget, collect_responses

    if args.samples < 1:
        raise DataSourceError(f"--samples must be at least 1, got {args.samples}.")
    check_outputs(args.runs, {_ANSWERED: args.out})
    rows = read_table(args.runs, "RUNS")
    system_prompt = args.system_prompt
    if args.system_prompt_file:
        system_prompt = Path(args.system_prompt_file).read_text("utf-8")
    target = OpenAITarget(
        args.model, base_url=args.base_url, api_key=os.environ.get(args.api_key_env),
        system_prompt=system_prompt, temperature=args.temperature, max_tokens=args.max_tokens,
        seed=args.seed, **request_settings(args),
    )  # fmt: skip
    cache = cache_setting(args)
    answered = collect_responses(rows, target, text=args.text, samples=args.samples,
                                 strategy=args.strategy, cache=cache,
                                 progress=console.progress)  # fmt: skip
    write_frame(answered, args.out, what=_ANSWERED)
    n_errors = int(answered["error"].is_not_null().sum())
    n_cached = int(answered["cached"].sum())
    console.payload.update(output=args.out, n_rows=answered.height, n_errors=n_errors,
                           n_cached=n_cached)  # fmt: skip
    if n_errors:
        errors = answered.filter(pl.col("error").is_not_null()).group_by("error").len()
        top = errors.sort("len", descending=True).head(_MAX_ERRORS_SHOWN).rows()
        listed = "; ".join(f"{e!r} ({n}x)" for e, n in top)
        console.warn(
            f"{n_errors} of {answered.height} generations failed and have a null output (their "
            f"pairs will not be judged): {listed}. Rerun the same command to retry only them."
        )
    console.verdict(
        f"{answered.height:,} rows, {answered.height - n_errors:,} responses "
        f"({n_cached:,} cached), {n_errors:,} errors -> {args.out}"
    )
    return 0


def read_table(paths: list[str], what: str) -> pl.DataFrame:
    """Rows from files of one format: parquet, .csv, .tsv, .jsonl/.ndjson or .json (folders and
    globs too), read by the package's one reader."""
    try:
        return scan_data(one_or_many(paths)).collect()
    except DataSourceError as exc:
        raise DataSourceError(f"{what}: {exc}") from exc


def _assignments(items: list[str], flag: str, *, single: bool = False) -> dict[str, list[str]]:
    parsed: dict[str, list[str]] = {}
    for item in items:
        dim, sep, rest = item.partition("=")
        values = [v.strip() for v in rest.split(",") if v.strip()]
        if not sep or not dim.strip() or not values or (single and len(values) != 1):
            shape = "DIM=VALUE" if single else "DIM=A,B,..."
            raise DataSourceError(
                f"{flag} expects {shape}, got {item!r}. Example: {flag} "
                + ("gender=female" if single else "race=White,Black,Asian")
                + "."
            )
        parsed[dim.strip()] = values
    return parsed


def _pair(dim: str, values: list[str]) -> tuple[str, str]:
    if len(values) != 2:
        raise DataSourceError(f"--poles {dim}= needs exactly two values, got {values}.")
    return values[0], values[1]


def _shipped_dimensions() -> list[str]:
    # The dimension names only: loading the lexicons themselves takes a second.
    folder = resources.files("pairwise_polars.counterfactual") / "lexicons"
    return list(json.loads((folder / "dimensions.json").read_text("utf-8")))
