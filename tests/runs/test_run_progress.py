"""The run's progress line advances as chunks finish, also when no chunk is started in this
process (Ray's workers score them; the driver only hears that they finished)."""

from __future__ import annotations

import io

from pairwise_polars.runs._run_progress import RunProgress


def test_the_chunk_count_advances_as_chunks_finish_out_of_order() -> None:
    bar = RunProgress(800, 8, enabled=False, stream=io.StringIO())
    bar.resume(5, 100)  # a chunk an earlier call finished
    assert bar.line().startswith("chunk 6/8 |")
    bar = RunProgress(800, 8, enabled=False, stream=io.StringIO())
    for _ in range(3):  # three chunks finished on the workers, none started here
        bar.chunk_done(100, 0, 0)
    assert bar.line().startswith("chunk 3/8 | pairs 300/800 (38%)")
