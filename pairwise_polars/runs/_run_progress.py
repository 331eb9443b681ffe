"""Progress of a large run: pairs done/total, chunk i/n, requests/s, cache hits, errors, ETA.

The scoring map tells each batch of answers to :meth:`RunProgress.answers` as it arrives, so
answers are counted within a chunk too; everything else comes from the scored chunk.
"""

from __future__ import annotations

import time
from typing import TextIO

from pairwise_polars.engine._progress import Progress


class RunProgress(Progress):
    """One line: ``chunk 3/40 | pairs 250,000/3,900,000 (6%) | judged 12,000, from cache
    3,000 | errors 2 | 480 req/s | ETA 5m12s`` (judged: answers received in this process)."""

    def __init__(
        self, n_pairs: int, n_chunks: int, *, enabled: bool, stream: TextIO | None = None
    ) -> None:
        super().__init__(max(n_pairs, 1), label="scoring", enabled=enabled, stream=stream)
        self.n_pairs = n_pairs
        self.n_chunks = n_chunks
        self.chunk = 0
        self.phase = "chunk"
        self.answered = 0  # judge answers received in this process
        self.pairs_here = 0  # pairs scored in this process (not resumed)
        self.resumed = 0

    def start_chunk(self, index: int, phase: str = "chunk") -> None:
        self.phase = phase
        self.chunk = index + 1
        self.update()

    def resume(self, index: int, pairs: int) -> None:
        self.chunk = index + 1
        self.resumed += pairs
        self.done += pairs

    def answers(self, answers: int, errors: int) -> None:
        """Count a batch of answers as it arrives from the judge (within a chunk too)."""
        self.answered += answers
        self.update(errors=errors, sent=0)

    def chunk_done(self, pairs: int, cached: int, not_judged: int) -> None:
        self.pairs_here += pairs
        # the judge's errors were counted as they arrived; add the pairs that were never judged
        self.update(done=pairs, cached=cached, errors=not_judged)

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        percent = 100.0 * self.done / self.n_pairs if self.n_pairs else 100.0
        text = (
            f"{self.phase} {self.chunk}/{self.n_chunks} | pairs {self.done:,}/{self.n_pairs:,} "
            f"({percent:.0f}%) | judged {self.answered:,}, from cache {self.cached:,} | "
            f"errors {self.errors:,} | {self.answered / elapsed:,.1f} req/s"
        )
        remaining = self.n_pairs - self.done
        if remaining > 0 and self.pairs_here:
            text += f" | ETA {_duration(remaining * elapsed / self.pairs_here)}"
        if self.resumed:
            text += f" | resumed {self.resumed:,} pairs"
        return text


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
