"""``pairs`` and ``score``: one-off work on parquet data, without a manifest."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.cli._console import Console, markdown_table
from pairwise_polars.cli._judge_options import add_judge_options, judge_from, prices_from
from pairwise_polars.cli._numbers import whole
from pairwise_polars.cli._options import (
    add_cache_options,
    add_pairing_options,
    cache_setting,
    pairing_from,
    storage_options_from,
)
from pairwise_polars.cli._output_paths import FRAME_FORMATS, check_outputs, one_or_many
from pairwise_polars.cli._panel_command import fanned_out, first_judge, judge_name, score_members
from pairwise_polars.cli._verdicts import exit_code, threshold
from pairwise_polars.io import (
    PROVENANCE_KEY,
    check_folder_writable,
    check_writable,
    input_files,
    scan_data,
    write_frame,
)
from pairwise_polars.judges import Judge, Panel
from pairwise_polars.labels import check_labels_for_pairs, join_labels
from pairwise_polars.metrics import metric_names, pairwise_metrics
from pairwise_polars.pairing import Columns, check_groups, form_pairs
from pairwise_polars.runs import RUNNERS, score_parquet
from pairwise_polars.scoring import (
    AUDITS,
    ORDERS,
    ScoringSpec,
    prepare,
    score_prepared,
)
from pairwise_polars.summary import DEFAULT_MAX_ERROR_RATE, ERROR_GATE, gate_summary, summarize

_PAIR_MARKERS = ("pair_id", "output_a", "output_b")
_SHOWN = ("pair_id", "dimension", "role_a", "role_b", "attribute_a", "attribute_b", "skip_reason")


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    pairs = subparsers.add_parser(
        "pairs",
        parents=[common],
        help="show or write the pair frame and group diagnostics",
        description="Form the pairs of response rows and report invalid groups. "
        "Prints the group diagnostics and the first pairs; -o writes the pair frame.",
    )
    pairs.add_argument(
        "data",
        nargs="+",
        metavar="DATA",
        help="file(s), folder(s) or glob(s) of response rows: parquet, CSV, TSV or NDJSON",
    )
    add_pairing_options(pairs)
    pairs.add_argument(
        "-o", "--out", metavar="FILE", help=f"write the pair frame ({FRAME_FORMATS})"
    )
    pairs.add_argument(
        "--diagnostics",
        metavar="FILE",
        help=f"write the invalid-group diagnostics ({FRAME_FORMATS})",
    )
    pairs.add_argument(
        "--keys-only",
        action="store_true",
        help="pair keys without text (cheap, for planning large runs)",
    )
    pairs.add_argument(
        "--limit", type=whole(0), default=10, metavar="N", help="pairs to print (default: 10)"
    )
    pairs.set_defaults(handler=_pairs)
    _register_score(subparsers, common)


def _register_score(subparsers: Any, common: argparse.ArgumentParser) -> None:
    score_cmd = subparsers.add_parser(
        "score",
        parents=[common],
        help="score data with a judge, without a manifest",
        description="Score response rows (or a pair frame written by `pairs -o`) and write the "
        "scored frame (parquet): one row per (pair, metric).",
    )
    score_cmd.add_argument(
        "data",
        nargs="+",
        metavar="DATA",
        help="file(s), folder(s) or glob(s) of response rows (parquet, CSV, TSV or NDJSON), or "
        "one pair frame",
    )
    out = score_cmd.add_mutually_exclusive_group(required=True)
    out.add_argument(
        "-o", "--out", metavar="FILE", help=f"the scored frame to write ({FRAME_FORMATS})"
    )
    out.add_argument(
        "--run-dir",
        metavar="DIR",
        help="score a large run chunk by chunk into DIR (scored/ parts, run.json journal, "
        "summary.parquet) with bounded memory; the same command resumes after a crash",
    )
    _run_dir_options(score_cmd)
    score_cmd.add_argument(
        "-m",
        "--metric",
        action="append",
        metavar="NAME_OR_FILE",
        help=f"a metric, repeatable (default: pairwise-bias); shipped: "
        f"{', '.join(metric_names())}, or a metric file (.yaml)",
    )
    add_judge_options(score_cmd)
    _view_options(score_cmd)
    add_cache_options(score_cmd, what="judgement", default="the user cache folder")
    score_cmd.add_argument(
        "--max-error-rate",
        type=threshold,
        default=DEFAULT_MAX_ERROR_RATE,
        metavar="X",
        help="exit 4 when more than this share of a metric's pairs has no score (default: "
        "%(default)s; 1 switches it off); the scored frame is written either way",
    )
    score_cmd.add_argument(
        "--dry-run",
        action="store_true",
        help="plan only: pairs, unique requests, cache hits, tokens",
    )
    score_cmd.add_argument(
        "--labels",
        metavar="FILE",
        help="human labels of pairs (pair_id, metric, label; `label-sample` writes the file to "
        "fill in): checked before the first judge call and kept in the scored frame, so "
        "summaries show the corrected figures",
    )
    add_pairing_options(score_cmd)
    score_cmd.set_defaults(handler=_score)


def _run_dir_options(score_cmd: argparse.ArgumentParser) -> None:
    """How a run directory is scored: chunks, starting over, the runner and its workers."""
    score_cmd.add_argument(
        "--chunk-size",
        type=whole(1),
        default=50_000,
        metavar="N",
        help="pairs per chunk with --run-dir (default: 50000; a chunk never splits a group)",
    )
    score_cmd.add_argument(
        "--overwrite",
        action="store_true",
        help="with --run-dir: start over in a directory that holds another run",
    )
    score_cmd.add_argument(
        "--runner",
        choices=RUNNERS,
        default="local",
        help="with --run-dir: score in this process (local, the default) or on a Ray cluster "
        "(ray: needs pairwise-polars[ray]; attaches to RAY_ADDRESS, else starts a local one)",
    )
    score_cmd.add_argument(
        "--ray-actors",
        type=whole(1),
        metavar="N",
        help="with --runner ray: judge workers (default: one per CPU of the cluster); each "
        "keeps --max-concurrency requests in flight, within one shared rate limit",
    )


def _view_options(score_cmd: argparse.ArgumentParser) -> None:
    """How each pair is shown to the judge: both orders, the order, the masked audit."""
    score_cmd.add_argument(
        "--both-orders",
        action="store_true",
        help="judge each pair as (a, b) and (b, a); report position bias",
    )
    score_cmd.add_argument(
        "--order",
        choices=ORDERS,
        default="random",
        help="show each pair to an LLM judge as (a, b) or (b, a) by a hash of its pair_id "
        "(random, the default: the same on every run) or always as (a, b) (fixed)",
    )
    score_cmd.add_argument(
        "--audit",
        choices=AUDITS,
        default=None,
        help="mask: judge every pair again with the attribute's terms masked (rows with "
        "view=masked); the summary then has judge_attribute_effect",
    )


def _data(args: argparse.Namespace) -> pl.LazyFrame:
    return scan_data(one_or_many(args.data), storage_options_from(args))


_PAIR_FRAME, _DIAGNOSTICS = "the pair frame (-o)", "the diagnostics (--diagnostics)"
_SCORED = "the scored frame (-o)"


def _pairs(args: argparse.Namespace, console: Console) -> int:
    check_outputs(args.data, {_PAIR_FRAME: args.out, _DIAGNOSTICS: args.diagnostics})
    strategy, pairing = pairing_from(args)
    data = _data(args)
    columns = pairing.get("columns") or Columns()
    problems = check_groups(
        data,
        strategy,
        columns=columns,
        reference=pairing.get("reference", "reference"),
        poles=pairing.get("poles", ("pole_a", "pole_b")),
        control=pairing.get("control", "control"),
    ).collect()
    group_col = columns.group_by
    counts = problems.group_by("problem").agg(pl.len().alias("groups")).sort("problem")
    console.payload["problems"] = dict(counts.iter_rows())
    if problems.is_empty():
        console.info("groups: every group can form pairs")
    else:
        console.info(f"invalid groups ({problems[group_col].n_unique()}):")
        for (problem,), part in problems.group_by("problem", maintain_order=True):
            examples = ", ".join(repr(v) for v in part[group_col].head(3).to_list())
            console.info(f"  {problem}: {part.height} group(s), e.g. {examples}")
    if args.diagnostics:
        write_frame(problems, args.diagnostics, what=_DIAGNOSTICS)
    pairs = form_pairs(
        one_or_many(args.data), strategy, keys_only=args.keys_only, **pairing
    ).collect()
    pairs = pairs.sort(group_col, "id_a", "id_b")  # a lazy pair frame has no defined order
    n_control = int((pairs["pair_kind"] == "control").sum())
    console.payload.update(
        n_pairs=pairs.height, n_control_pairs=n_control, n_groups=pairs[group_col].n_unique()
    )
    controls = f" ({n_control:,} control pairs: the noise floor)" if n_control else ""
    console.verdict(f"{pairs.height:,} pairs{controls} in {pairs[group_col].n_unique():,} groups")
    shown = [c for c in (group_col, *_SHOWN) if c in pairs.columns]
    if args.limit > 0 and pairs.height:
        console.info(markdown_table(pairs.select(shown).head(args.limit)))
    if args.out:
        write_frame(pairs, args.out, what=_PAIR_FRAME)
        console.payload["output"] = args.out
        console.info(f"wrote {args.out}")
    return 0


def _is_pair_frame(data: pl.LazyFrame) -> bool:
    schema = data.collect_schema()
    return all(c in schema for c in _PAIR_MARKERS)


def _check_runner(args: argparse.Namespace) -> None:
    if not args.run_dir and (args.runner != "local" or args.ray_actors is not None):
        flag = "--ray-actors" if args.runner == "local" else f"--runner {args.runner}"
        raise OptionError(
            f"{flag} scores a run directory: add --run-dir DIR (with -o the scored frame is "
            "built in this process)."
        )
    if args.ray_actors is not None and args.runner != "ray":
        raise OptionError("--ray-actors sizes the Ray runner's pool: add --runner ray.")


def _score(args: argparse.Namespace, console: Console) -> int:
    _check_runner(args)
    check_outputs(args.data, {_SCORED: args.out}, {"the run directory (--run-dir)": args.run_dir})
    data = _data(args)
    metrics = pairwise_metrics(args.metric or ["pairwise-bias"])  # before the data is paired
    judged_by = judge_from(args)  # a judge, or a panel (--judge repeated)
    judge = first_judge(judged_by)
    spec = ScoringSpec(tuple(metrics), judge, args.order, args.both_orders, args.audit)
    members = judged_by if fanned_out(judged_by, args) else None
    cache = cache_setting(args)
    if args.out and not args.dry_run:  # before anything is paid for
        check_writable(args.out, what=_SCORED)
    is_pairs = _is_pair_frame(data)
    if args.run_dir and not args.dry_run:  # a plan would read the whole run into memory
        return _score_run(args, console, spec, cache, members)
    if is_pairs:
        pairs: pl.LazyFrame = data
    else:
        strategy, pairing = pairing_from(args)
        pairs = form_pairs(one_or_many(args.data), strategy, **pairing)  # paths: messages name them
    if members is not None:
        prices = prices_from(args, judge.name) if not isinstance(members, Panel) else {}
        scored = score_members(args, console, pairs, metrics, members, cache, prices)
        if scored is None:
            console.verdict("Dry run: nothing was judged or written.")
            return 0
        strategy = None if is_pairs else args.strategy
        _save_scored(scored, args, spec, strategy=strategy, judge=judge_name(members))
        return _error_gate(scored, args, console)
    return _score_pairs(args, console, pairs, spec, cache, is_pairs)


def _score_pairs(
    args: argparse.Namespace,
    console: Console,
    pairs: pl.LazyFrame,
    spec: ScoringSpec,
    cache: bool | str | None,
    is_pairs: bool,
) -> int:
    """Prepare, plan and score the pairs in this process (with their labels); save and gate."""
    prepared = prepare(pairs, spec=spec)
    checked = None
    if args.labels:  # a bad label stops the run before anything is paid for
        maxima = {m.name: m.max_score for m in prepared.metrics}
        checked = check_labels_for_pairs(prepared.pairs, maxima, args.labels)

    _, scored = score_prepared(
        prepared,
        cache=cache,
        progress=console.progress,
        dry_run=args.dry_run,
        on_plan=lambda planned: console.record("plan", planned),
        prices=prices_from(args, spec.judge.name),
        on_usage=lambda usage: console.record("usage", usage),
    )
    if scored is None:
        console.verdict("Dry run: nothing was judged or written.")
        return 0
    if checked is not None:
        scored = join_labels(scored.lazy(), checked).collect()
    _save_scored(scored, args, spec, strategy=None if is_pairs else args.strategy)
    n_errors = scored["error"].is_not_null().sum()
    console.payload.update(output=args.out, n_rows=scored.height, n_errors=int(n_errors))
    console.verdict(
        f"scored {scored.height:,} (pair, metric) rows, {n_errors:,} errors -> {args.out}"
    )
    return _error_gate(scored, args, console)


def _score_run(
    args: argparse.Namespace,
    console: Console,
    spec: ScoringSpec,
    cache: bool | str | None,
    members: Judge | Panel | None = None,
) -> int:
    source = one_or_many(args.data)
    strategy, pairing = pairing_from(args)
    check_folder_writable(args.run_dir, what="the run directory (--run-dir)")
    scoring: dict[str, Any] = {"spec": spec}
    if members is not None:  # a panel or repeats: the keywords, not the one-judge spec
        scoring = {
            "metrics": list(spec.metrics), "judge": members, "repeats": args.repeats,
            "both_orders": spec.both_orders, "order": spec.order, "audit": spec.audit,
        }  # fmt: skip
    run = score_parquet(
        source,
        args.run_dir,
        **scoring,
        strategy=strategy,
        chunk_size=args.chunk_size,
        cache=cache,
        progress=console.progress,
        overwrite=args.overwrite,
        prices=prices_from(args, spec.judge.name),
        runner=args.runner,
        actors=args.ray_actors,
        labels=args.labels,
        **pairing,
    )
    if run.usage is not None:
        console.record("usage", run.usage)
    console.payload.update(
        output=args.run_dir,
        n_pairs=run.n_pairs,
        n_errors=run.errors,
        chunks_resumed=run.chunks_resumed,
    )
    console.verdict(
        f"scored {run.n_pairs:,} pairs in {run.n_chunks:,} chunk{'' if run.n_chunks == 1 else 's'} "
        f"({run.chunks_resumed:,} "
        f"resumed, {run.from_cache:,} judgements from the cache, {run.errors:,} errors) -> "
        f"{args.run_dir}"
    )
    return _error_gate(run.scored(), args, console)


def _error_gate(
    scored: pl.DataFrame | pl.LazyFrame, args: argparse.Namespace, console: Console
) -> int:
    """The error gate of ``gate`` on each metric's pairs: exit 4 when judgements failed beyond
    --max-error-rate (or nothing was scored), with the verdict naming the commonest error."""
    summary = summarize(scored, [], group_by="pair_id")  # counts only: any grouping will do
    result = gate_summary(summary, overall={ERROR_GATE: args.max_error_rate})
    console.payload.update(status=result.status, checks=result.checks.to_dicts())
    if result.passed:
        return 0
    console.verdict(result.verdict())
    return exit_code([result])


def _save_scored(
    scored: pl.DataFrame,
    args: argparse.Namespace,
    spec: ScoringSpec,
    *,
    strategy: str | None,
    judge: str | None = None,
) -> None:
    """Write ``-o`` with where it came from in its footer (for ``report``). When the write fails
    after judging (the disk filled up meanwhile), the frame goes to the temporary folder, so
    judgements paid for with --no-cache are not lost."""
    about = {
        "data": list(input_files(args.data, storage_options_from(args)).files),
        "strategy": strategy,
        "metrics": [m.name for m in spec.metrics],
        "judge": judge or spec.judge.name,
        "both_orders": spec.both_orders,
        **({"audit": spec.audit} if spec.audit else {}),
        "scored_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    metadata = {PROVENANCE_KEY: json.dumps(about)}
    write_frame(scored, args.out, what=_SCORED, metadata=metadata, rescue=True)
