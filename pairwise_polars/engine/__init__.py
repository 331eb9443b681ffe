"""The engine under the judges and response collection: the HTTP endpoint (client, limits,
retries), the SQLite caches, the cached async map, progress, and the sync wrapper."""

from pairwise_polars.engine._cache import (
    JudgementCache,
    ResultTable,
    cache_session,
    default_cache_path,
)
from pairwise_polars.engine._cached_map import cached_map
from pairwise_polars.engine._endpoint import ChatEndpoint
from pairwise_polars.engine._limits import RateLimiter
from pairwise_polars.engine._prices import PRICES, Price
from pairwise_polars.engine._progress import Progress
from pairwise_polars.engine._sync import run_sync, sync_twin

__all__ = [
    "PRICES",
    "ChatEndpoint",
    "JudgementCache",
    "Price",
    "Progress",
    "RateLimiter",
    "ResultTable",
    "cache_session",
    "cached_map",
    "default_cache_path",
    "run_sync",
    "sync_twin",
]
