"""Benchmark: the heuristic judge (v3) against its previous version (v2) and v1, side by side.

Each cell is a fresh Python process watched by the shared harness (peak RSS from the child's own
VmHWM; killed above ``--mem-limit-gb``). Repeats are interleaved between the judges, so a busy
spell of the shared machine hits both.

- ``run``: the large-run path of the offline-run benchmark, ``score_parquet(path, out,
  "pairwise-bias", judge=..., chunk_size=50_000)``, on the seeded synthetic run of
  ``benchmarks/_data.py`` (pseudo-word text, ~600-character outputs; ``--rows`` rows,
  1,286,000 by default = ~1.0M pairs): pairs/s end to end, as in the ~46,000 pairs/s measured
  for v1 at 5M rows.
- ``judge``: ``heuristic_scores`` alone on ``--pairs`` request rows whose outputs are real English
  answers (the shipped samples' letters and DecodingTrust answers, the labelled XSTest answers
  and the written decision pairs, drawn with a seed), where the patterns actually match: the
  judge's own cost, without pairing or parquet.

v1 is the word-overlap judge (the package at a pinned commit, ``_frozen.PINNED``); v2 is the
treatment-profile judge before the XSTest follow-up (its action patterns at their pinned
commit, patched into the current profile code: the action patterns are the only thing that
changed); v3 is the current judge. Usage (from the repository root)::

    python benchmarks/bench_heuristic.py                       # both tasks, 2 repeats
    python benchmarks/bench_heuristic.py --rows 50000 --pairs 20000 --repeats 1   # smoke check
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
if importlib.util.find_spec("pairwise_polars") is None:  # else: installed, or on PYTHONPATH
    sys.path.insert(1, str(ROOT))

import _data  # noqa: E402
from _frozen import frozen  # noqa: E402
from _harness import GIB, Outcome, report, run_child  # noqa: E402

JUDGES = ("v1", "v2", "v3")


def _judge(version: str):
    if version == "v1":
        v1 = frozen("heuristic_v1", "judges._heuristic")

        return v1.OfflineJudge(), v1.offline_scores
    from pairwise_polars.judges.heuristic import HeuristicJudge, heuristic_scores

    if version == "v2":
        # The judge as it was before the XSTest follow-up: the same profile code with the frozen
        # action patterns of the pinned v2 commit (the only module that changed).
        _heuristic_v2_action = frozen("heuristic_v2", "judges.heuristic._action")

        from pairwise_polars.judges.heuristic import _profile

        _profile.CUES = _heuristic_v2_action.CUES
        _profile.action_cues = _heuristic_v2_action.action_cues
        _profile.action_from_cues = _heuristic_v2_action.action_from_cues
    return HeuristicJudge(), heuristic_scores


def real_requests(n_pairs: int, seed: int) -> Path:
    """A parquet of ``n_pairs`` pairwise-bias requests between real answers (cached)."""
    import json as _json

    import numpy as np
    import polars as pl

    path = _data.WORK / f"real_requests_xstest_v2_{n_pairs}_seed{seed}.parquet"
    if path.exists():
        return path
    data = ROOT / "data"
    labelled = ROOT / "tests" / "judges" / "data"
    texts = [
        pl.read_parquet(data / "letters_contrastive.parquet").select("input", "output"),
        pl.read_parquet(data / "jobs_group.parquet").select("input", "output"),
    ]
    rows = [_json.loads(line) for line in (labelled / "xstest_v2.jsonl").read_text().splitlines()]
    texts.append(pl.DataFrame(rows).select(input="prompt", output="text"))
    lines = (labelled / "treatment_pairs.jsonl").read_text().splitlines()
    pairs = pl.DataFrame([_json.loads(line) for line in lines])
    texts += [pairs.select("input", output=side) for side in ("output_a", "output_b")]
    pool = pl.concat(texts)
    rng = np.random.default_rng(seed)
    a = pool[rng.integers(0, pool.height, n_pairs)]
    b = pool[rng.integers(0, pool.height, n_pairs)]
    requests = pl.DataFrame(
        {
            "key": pl.int_range(n_pairs, eager=True).cast(pl.String),
            "metric": pl.repeat("pairwise-bias", n_pairs, eager=True),
            "output_a": a["output"],
            "output_b": b["output"],
            "input_a": a["input"],
            "input_b": b["input"],
        }
    )
    _data.WORK.mkdir(parents=True, exist_ok=True)
    requests.write_parquet(path)
    return path


# -- children ---------------------------------------------------------------------------------


def child(task: str, version: str, path: str) -> None:
    import polars as pl

    judge, scores = _judge(version)
    if task == "judge":
        requests = pl.read_parquet(path)
        started = time.perf_counter()
        out = scores(requests)
        total = time.perf_counter() - started
        report(
            {
                "total_s": total,
                "n_pairs": out.height,
                "pairs_per_s": out.height / total,
                "mean_score": out["raw_score"].mean(),
            }
        )
        return
    from pairwise_polars.runs import score_parquet

    work = Path(tempfile.mkdtemp(prefix="bench-heuristic-"))
    try:
        started = time.perf_counter()
        run = score_parquet(
            path,
            work / "out",
            "pairwise-bias",
            judge=judge,
            cache=False,
            chunk_size=50_000,
            progress=False,
        )
        total = time.perf_counter() - started
        report(
            {
                "total_s": total,
                "n_pairs": run.n_pairs,
                "pairs_per_s": run.n_pairs / total,
                "mean_score": run.scored().select(pl.col("score").mean()).collect().item(),
            }
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- parent -----------------------------------------------------------------------------------


def bench(args: argparse.Namespace) -> dict[tuple[str, str], Outcome]:
    paths = {}
    if "run" in args.tasks:
        paths["run"] = str(_data.dataset_path(args.rows, args.seed))
    if "judge" in args.tasks:
        paths["judge"] = str(real_requests(args.pairs, args.seed))
    outcomes = {(t, v): Outcome(task=(t, v)) for t in args.tasks for v in JUDGES}
    for _ in range(args.repeats):
        for task in args.tasks:
            for version in JUDGES:
                outcome = outcomes[(task, version)]
                if outcome.guarded:
                    continue
                cmd = [sys.executable, __file__, "--child", task, version, paths[task]]
                run = run_child(
                    cmd,
                    mem_limit=int(args.mem_limit_gb * GIB),
                    min_available=int(args.min_available_gb * GIB),
                    cwd=ROOT,
                )
                if "guarded" in run:
                    outcome.guarded = f"{run['guarded']} after {run['wall_s']:.0f} s"
                    continue
                outcome.runs.append(run)
                print(
                    f"  {task} {version}: {run['total_s']:.1f} s, {run['pairs_per_s']:,.0f} "
                    f"pairs/s, {run['peak_rss'] / GIB:.2f} GiB, load {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
    return outcomes


def table(outcomes: dict[tuple[str, str], Outcome]) -> str:
    lines = [
        "| task | text | judge | runs | pairs | s (median) | pairs/s (median) | pairs/s runs "
        "| peak RSS (GiB) | v3 / v2 | v3 / v1 |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    text = {"run": "synthetic, score_parquet end to end", "judge": "real answers, judge only"}
    for (task, version), outcome in outcomes.items():
        if outcome.guarded:
            lines.append(f"| {task} | {text[task]} | {version} | | | | | {outcome.guarded} | | | |")
            continue
        rate = outcome.median("pairs_per_s")
        v1 = outcomes[(task, "v1")].median("pairs_per_s")
        v2 = outcomes[(task, "v2")].median("pairs_per_s")
        ratios = f"{rate / v2:.2f}x | {rate / v1:.2f}x" if version == "v3" and v1 and v2 else " | "
        runs = ", ".join(f"{r['pairs_per_s']:,.0f}" for r in outcome.runs)
        lines.append(
            f"| {task} | {text[task]} | {version} | {len(outcome.runs)} | "
            f"{int(outcome.median('n_pairs')):,} | {outcome.median('total_s'):.1f} | {rate:,.0f} "
            f"| {runs} | {outcome.median('peak_rss') / GIB:.2f} | {ratios} |"
        )
    means = {
        f"{t} {v}": round(o.runs[0]["mean_score"], 3) for (t, v), o in outcomes.items() if o.runs
    }
    return "\n".join(lines) + f"\n\nmean scores (v1 measures something else): {means}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", choices=["run", "judge"], default=["run", "judge"])
    parser.add_argument("--rows", type=int, default=1_286_000, help="rows of the synthetic run")
    parser.add_argument("--pairs", type=int, default=1_000_000, help="real-answer requests")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mem-limit-gb", type=float, default=12.0, help="kill a child above")
    parser.add_argument("--min-available-gb", type=float, default=1.5)
    args = parser.parse_args(argv)
    import polars

    print(
        f"{date.today()} {platform.machine()} {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / GIB:.0f} GiB "
        f"(shared with other work); python {platform.python_version()}, "
        f"polars {polars.__version__}; load average at start {os.getloadavg()[0]:.1f}"
    )
    print(table(bench(args)))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        main()
