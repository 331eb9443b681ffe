"""Benchmark: probability-weighted scores (``score_from="logprobs"``) against the written score
(the argmax) on simulated judges, vectorised numpy.

Each item has a true divergence ``mu`` on the 0-4 rubric (uniform). A simulated judge call
reads it with a call-to-call drift ``b ~ N(0, drift)`` and puts probability
``p(s) ~ exp(-(s - mu - b)^2 / (2 width^2))`` on each score ``s``: the written score is the
argmax (a temperature-0 judge) and the probability-weighted score is ``sum(s * p(s))``. For each
judge (drift, width) it reports, over ``items`` items judged ``repeats`` times each:

- ``sd argmax`` / ``sd expectation``: the within-item standard deviation across repeated calls
  (how much a rerun moves one pair's score), and their variance ratio (the variance reduction);
- the standard deviation of a slice's mean score over ``slice`` items across reruns;
- ``rmse``: each score's root mean squared error against ``mu`` (the expectation is pulled
  toward the middle near the ends of the rubric, the argmax is coarse everywhere).

Monte Carlo error: every figure is the mean over ``seeds`` independent simulations, given
with its standard error. Nothing is fitted, so there is no held-out part to keep.

Usage (from the repository root)::

    python benchmarks/bench_logprobs.py                 # 2,000 items x 20 calls, 10 seeds
"""

from __future__ import annotations

import argparse
import shlex
import sys

import numpy as np

SCORES = np.arange(5.0)
JUDGES = ((0.3, 0.5), (0.3, 0.8), (0.6, 0.5), (0.6, 0.8))  # (drift, width)


def simulate(rng: np.random.Generator, items: int, repeats: int, drift: float, width: float,
             slice_size: int) -> dict[str, float]:  # fmt: skip
    mu = rng.uniform(0, 4, items)
    centre = mu[:, None] + rng.normal(0, drift, (items, repeats))
    logits = -((SCORES[None, None, :] - centre[..., None]) ** 2) / (2 * width**2)
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    written = p.argmax(axis=-1).astype(float)
    expected = (p * SCORES).sum(axis=-1)
    out: dict[str, float] = {}
    for name, score in (("argmax", written), ("expectation", expected)):
        out[f"sd {name}"] = float(np.sqrt(score.var(axis=1, ddof=1).mean()))
        slices = score[: items - items % slice_size].reshape(-1, slice_size, repeats).mean(axis=1)
        out[f"slice sd {name}"] = float(np.sqrt(slices.var(axis=1, ddof=1).mean()))
        out[f"rmse {name}"] = float(np.sqrt(((score - mu[:, None]) ** 2).mean()))
    out["variance ratio"] = (out["sd argmax"] / out["sd expectation"]) ** 2
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--slice", type=int, default=100, dest="slice_size")
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args(argv)
    print("`python benchmarks/bench_logprobs.py " + shlex.join(sys.argv[1:] if argv is None
                                                               else argv) + "`")  # fmt: skip
    keys = ("sd argmax", "sd expectation", "variance ratio", "slice sd argmax",
            "slice sd expectation", "rmse argmax", "rmse expectation")  # fmt: skip
    print("\n| judge (drift, width) | " + " | ".join(keys) + " |")
    print("|" + " --- |" * (len(keys) + 1))
    for drift, width in JUDGES:
        runs = [simulate(np.random.default_rng(seed), args.items, args.repeats, drift, width,
                         args.slice_size) for seed in range(args.seeds)]  # fmt: skip
        cells = []
        for key in keys:
            values = np.array([run[key] for run in runs])
            se = values.std(ddof=1) / np.sqrt(len(values))
            cells.append(f"{values.mean():.3f} ± {se:.3f}")
        print(f"| ({drift}, {width}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
