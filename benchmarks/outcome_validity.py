"""Accuracy of the heuristic outcome reader (``pp.outcomes`` without a key) on labelled sets.

- ``validity/outcome_labels.jsonl``: 60 responses to 30 requests (a decision, an offered
  amount of money, a sentence, a rating or a refusal), written for this package and labelled
  by hand with the decision (1 / 0 / null), the first offered number with its unit, and
  whether the response refuses. Split by request: ``dev`` (15 requests) and ``held_out``
  (15). The reader was not changed after the set was written (it reuses the heuristic judge's
  treatment profile as it is), so both splits measure it; the held-out split is kept apart for
  whoever tunes the reader next.
- ``tests/judges/data/xstest_v2.jsonl``: XSTest v2 completions with the XSTest authors' labels;
  refusal = "full refusal" (partial refusals count as not refused), per split (the heuristic's
  refusal patterns were written on its dev split).

Printed per split: decision accuracy (over all responses; null must be read as null), the
share of labelled amounts read exactly (within 0.5%) with the right unit, the share of
responses without an amount read as none, and refusal precision / recall / accuracy.

    python benchmarks/outcome_validity.py
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if importlib.util.find_spec("pairwise_polars") is None:
    sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

import pairwise_polars as pp  # noqa: E402


def _read(path: Path) -> pl.DataFrame:
    return pl.DataFrame([json.loads(line) for line in path.read_text().splitlines() if line])


def labelled_set() -> None:
    labels = _read(HERE / "validity" / "outcome_labels.jsonl")
    read = pp.outcomes(labels.drop("decision", "amount", "amount_unit", "refused"))
    assert isinstance(read, pl.DataFrame)
    both = labels.select(
        "id", "split", pl.col("decision").cast(pl.Float64).alias("want_decision"),
        pl.col("amount").cast(pl.Float64).alias("want_amount"),
        pl.col("amount_unit").alias("want_unit"), pl.col("refused").alias("want_refused"),
    ).join(read.select("id", "decision", "amount", "amount_unit", "refused"), on="id")  # fmt: skip
    print("| split | n | decision accuracy | amounts read (of labelled) | no amount read as none "
          "| refusal accuracy |\n| --- | --- | --- | --- | --- | --- |")  # fmt: skip
    for split in ("dev", "held_out"):
        s = both.filter(pl.col("split") == split)
        decision = s.select(pl.col("decision").eq_missing(pl.col("want_decision")).mean()).item()
        labelled = s.filter(pl.col("want_amount").is_not_null())
        right = labelled.filter(
            ((pl.col("amount") - pl.col("want_amount")).abs()
             <= 0.005 * pl.col("want_amount").abs().clip(lower_bound=1e-9))
            & pl.col("amount_unit").eq_missing(pl.col("want_unit"))
        ).height  # fmt: skip
        none = s.filter(pl.col("want_amount").is_null())
        none_ok = none.filter(pl.col("amount").is_null()).height
        refusal = s.select(pl.col("refused").eq_missing(pl.col("want_refused")).mean()).item()
        print(f"| {split} | {s.height} | {decision:.3f} | {right}/{labelled.height} "
              f"| {none_ok}/{none.height} | {refusal:.3f} |")  # fmt: skip
    misses = both.filter(
        ~pl.col("decision").eq_missing(pl.col("want_decision"))
        | ~pl.col("refused").eq_missing(pl.col("want_refused"))
    )
    print(f"\nmisread decisions or refusals: {misses['id'].to_list()}")


def xstest() -> None:
    rows = _read(ROOT / "tests" / "judges" / "data" / "xstest_v2.jsonl")
    read = pp.outcomes(rows.select("id", "split", pl.col("prompt").alias("input"),
                                   pl.col("text").alias("output"), "label"))  # fmt: skip
    assert isinstance(read, pl.DataFrame)
    print("\n| XSTest v2 split | n | refusal precision | refusal recall | accuracy |")
    print("| --- | --- | --- | --- | --- |")
    for split in sorted(read["split"].unique().to_list()):
        s = read.filter(pl.col("split") == split)
        want = s["label"] == "refuses"
        got = s["refused"].fill_null(False)
        tp = (want & got).sum()
        precision = tp / max(got.sum(), 1)
        recall = tp / max(want.sum(), 1)
        accuracy = (want == got).mean()
        print(f"| {split} | {s.height} | {precision:.3f} | {recall:.3f} | {accuracy:.3f} |")


if __name__ == "__main__":
    labelled_set()
    xstest()
