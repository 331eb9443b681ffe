"""Large parquet runs, offline: chunked scoring with bounded memory, parts, a journal, resume.

:func:`score_parquet` plans the pairs from the key columns, scores them chunk by chunk through
the same map as :func:`~pairwise_polars.score_pairs`, writes each chunk as a parquet part and
records it in ``run.json``; rerunning the same call after a crash finishes the run without
paying again for any judgement the cache holds. ``runner="ray"`` runs the same plan on Ray Data
(``_ray_run``, the one module that imports Ray, imported only then). :func:`chunked_pairs`
yields a run's pairs chunk by chunk, as it scores them.
"""

from pairwise_polars.runs._chunked_pairs import chunked_pairs
from pairwise_polars.runs._parquet_run import (
    RUNNERS,
    ParquetRun,
    Runner,
    ascore_parquet,
    score_parquet,
)

__all__ = ["RUNNERS", "ParquetRun", "Runner", "ascore_parquet", "chunked_pairs", "score_parquet"]
