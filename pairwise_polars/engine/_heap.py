"""The collector during a run: the objects alive before it are left out of its full passes."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def settled_heap() -> Iterator[None]:
    """Objects alive on entry kept out of the cyclic collector's passes until exit
    (``gc.freeze``), then handed back to it (``gc.unfreeze``); nothing is lost, a cycle among
    them is only collected later.

    A run allocates and drops objects per request; each full pass of the collector walks every
    object in the process (imports, the pair frame's strings), and in a 3,000-request run such
    passes measured 0.02-0.05 ms of CPU per request (benchmarks/RESULTS.md). Left alone when
    the collector is off or something else froze objects (a pre-fork server's own freeze must
    not be undone).
    """
    if not gc.isenabled() or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
