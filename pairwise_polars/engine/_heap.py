"""The collector during a run: the objects alive before it are left out of its full passes, and
its young passes come less often."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 25_000
"""The collector's first threshold during a run (allocations net of frees between two passes
over the youngest objects; CPython's default is 700 or 2,000): at 256 requests in flight a
3,000-request run made ~150 young passes and ~13 middle ones, 0.04-0.06 and 0.05-0.07 s of its
~1.1 s (benchmarks/RESULTS.md). Cycles are still collected, later; the objects waiting for it
are a few MB at most."""


@contextmanager
def settled_heap() -> Iterator[None]:
    """Objects alive on entry kept out of the cyclic collector's passes until exit
    (``gc.freeze``), then handed back to it (``gc.unfreeze``), and the collector's first
    threshold raised to :data:`YOUNG_THRESHOLD` meanwhile (then restored); nothing is lost, a
    cycle is only collected later.

    A run allocates and drops objects per request; each full pass of the collector walks every
    object in the process (imports, the pair frame's strings), and in a 3,000-request run such
    passes measured 0.02-0.05 ms of CPU per request (benchmarks/RESULTS.md); the passes over
    the young objects (the requests in flight, their answers) cost about as much again. Left
    alone when the collector is off or something else froze objects (a pre-fork server's own
    freeze must not be undone; a second run at once finds the first's).
    """
    if not gc.isenabled() or gc.get_freeze_count():
        yield
        return
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
