"""The driver's peak memory of a ``runner: ray`` manifest target, before and after issue 22
(the Ray path plans chunk by chunk instead of pairing and rendering the whole input in memory).

A generated input (``--rows`` response rows, groups of a reference, two variants and a control,
``--text`` characters per output) is run as a manifest target with ``runner: ray`` and the
key-free heuristic judge (``judge: heuristic``, no cache), once with the package of each
checkout, each in a fresh process. Reported per checkout: the driver's peak resident memory
when the plan is shown and at the end (``ru_maxrss`` of the driver process; Ray's own
processes are not counted; ``VmHWM`` of ``/proc/self/status`` beside it, which an exec
cannot inherit from the parent: the inputs are written by a child process, so this one stays
small), and the wall time. Linux only. ``--before`` is a copy of the package at the
pinned commit RESULTS.md names, e.g. ``git archive <commit> pairwise_polars | tar -x -C DIR``.

    python benchmarks/bench_ray_target_memory.py --before DIR [--rows 200000] [--text 400]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from pairwise_polars.manifest import load_manifest, run_target
manifest, run_dir = sys.argv[1:3]
def peak_mib():
    hwm = open("/proc/self/status").read().split("VmHWM:")[1].split()[0]
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, int(hwm) / 1024
started = time.monotonic()
at_plan = []
target = load_manifest(manifest).targets["bench"]
def planned(_):
    at_plan.append(peak_mib())
run = run_target(target, progress=False, run_dir=run_dir, on_plan=planned)
print(json.dumps({
    "plan_mib": at_plan[0], "end_mib": peak_mib(), "seconds": time.monotonic() - started,
    "pairs": run.plan.n_pairs, "scored": run.scored.height, "passed": run.gates.passed,
    "summary": run.summary.write_json(), "pair_columns": len(run.pairs.columns),
}))
"""
ROLES = ["reference", "variant", "variant", "control"]
WORDS = np.array(["offer", "salary", "approve", "decline", "candidate", "role", "the", "team"])


def write_rows(path: Path, rows: int, text: int, seed: int = 0) -> None:
    """``rows`` response rows in groups of four, each group's rows together (as runs are
    written), outputs of about ``text`` characters that differ row by row."""
    rng = np.random.default_rng(seed)
    ids = np.arange(rows)
    group = ids // len(ROLES)
    filler = [" ".join(rng.choice(WORDS, text // 6))[:text] for _ in range(64)]
    pl.DataFrame(
        {
            "id": ids,
            "group_id": group,
            "role": np.array(ROLES)[ids % len(ROLES)],
            "dimension": np.array(["gender", "race", "age", "religion"])[group % 4],
            "input": pl.Series(group.astype(str)).str.pad_start(8) + " Should we hire Sam?",
            "output": pl.Series(ids.astype(str)).str.pad_start(8)
            + pl.Series(np.array(filler)[rng.integers(0, 64, rows)]),
        }
    ).write_parquet(path)


def measure(package: Path, manifest: Path, run_dir: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(package)}
    env.pop("RAY_ADDRESS", None)  # a local Ray of its own, as the CLI would start
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(manifest), str(run_dir)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=manifest.parent,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, required=True, help="the pinned package copy")
    parser.add_argument("--after", type=Path, default=ROOT, help="default: this checkout")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--text", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        rows = str(work / "rows.parquet")
        writer = "from bench_ray_target_memory import write_rows as w; w(" + (
            f"{rows!r}, {args.rows}, {args.text})"
        )
        here = str(Path(__file__).resolve().parent)
        subprocess.run([sys.executable, "-c", writer], check=True, cwd=here)
        manifest = work / "m.yaml"
        manifest.write_text(
            "targets:\n  bench:\n    pairwise:\n      data: rows.parquet\n"
            "      judge: heuristic\n      cache: false\n      runner: ray\n",
            encoding="utf-8",
        )
        results = {
            name: measure(package, manifest, work / f"run-{name}")
            for name, package in (("before", args.before), ("after", args.after))
        }
    before, after = results["before"], results["after"]
    assert before["summary"] == after["summary"], "the summaries differ"
    assert (before["pairs"], before["scored"]) == (after["pairs"], after["scored"])
    print(f"{args.rows:,} rows, {before['pairs']:,} pairs, outputs of ~{args.text} characters")
    print("| driver peak RSS, MiB (ru_maxrss / VmHWM) | before | after |")
    print("|---|---:|---:|")
    for stage in ("plan", "end"):
        cells = [" / ".join(f"{v:,.0f}" for v in run[f"{stage}_mib"]) for run in (before, after)]
        print(f"| at the {stage} | {cells[0]} | {cells[1]} |")
    print(f"| wall time | {before['seconds']:.1f} s | {after['seconds']:.1f} s |")
    print("summaries identical: yes")


if __name__ == "__main__":
    main()
