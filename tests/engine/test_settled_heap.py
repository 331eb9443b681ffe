"""A run keeps the objects alive before it out of the collector's full passes and hands them
back at the end: after a run the process's collector is as it was (nothing left frozen, a
freeze of the caller's own kept)."""

from __future__ import annotations

import gc

from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.testing import TestServer


def _judged(server: TestServer) -> int:
    judge = pp.OpenAIJudge("judge-model", base_url=server.base_url, api_key="k")
    scored = pp.score(jobs(groups=4), "pairwise-bias", judge=judge, cache=False, progress=False)
    return scored.height


def test_a_run_leaves_nothing_frozen() -> None:
    with TestServer(models=["judge-model"]) as server:
        assert gc.get_freeze_count() == 0
        assert _judged(server) > 0
        assert gc.get_freeze_count() == 0
        assert gc.isenabled()


def test_a_callers_own_freeze_is_kept() -> None:
    with TestServer(models=["judge-model"]) as server:
        gc.freeze()
        try:
            frozen = gc.get_freeze_count()
            assert _judged(server) > 0
            # still frozen (not handed back by the run); a frozen object may have died since
            assert gc.get_freeze_count() > 0.9 * frozen > 0
        finally:
            gc.unfreeze()


def test_young_passes_come_less_often_during_a_run_only() -> None:
    seen: list[int] = []

    def reply(body: dict) -> None:  # the server runs in this process: it sees the collector
        seen.append(gc.get_threshold()[0])

    before = gc.get_threshold()
    with TestServer(models=["judge-model"], reply=reply) as server:
        assert _judged(server) > 0
    assert seen and min(seen) >= 25_000
    assert gc.get_threshold() == before  # restored

    gc.set_threshold(100_000, *before[1:])  # a caller's own, higher threshold is kept
    try:
        seen.clear()
        with TestServer(models=["judge-model"], reply=reply) as server:
            assert _judged(server) > 0
        assert set(seen) == {100_000} and gc.get_threshold()[0] == 100_000
    finally:
        gc.set_threshold(*before)
