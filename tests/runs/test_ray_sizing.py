"""A local Ray the run starts for itself is sized for the machine, not by Ray's defaults: its CPUs
from the process's affinity and cgroup quota, a modest object store, no dashboard, no prestarted
workers; a session the caller started (its CPUs, its store) is used as it is, and ``actors=``
wins over the default pool. The sizing is a pure function, tested without Ray; one test starts
a Ray the way ``score_parquet`` does and checks the run still equals the local one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import ROOT, jobs

from pairwise_polars.runs import _ray_sizing, score_parquet
from pairwise_polars.runs._ray_sizing import MIB, local_ray_options, pool_size

GIB = 1024 * MIB


@pytest.mark.parametrize(
    ("memory", "store"),
    [
        (24 * GIB, 2048 * MIB),  # 10 % would be 2.4 GiB: capped (Ray's default: 7.2 GiB)
        (8 * GIB, int(8 * GIB * 0.10)),  # a tenth of what is available
        (GIB, 256 * MIB),  # a tenth would be 102 MiB: the floor
        (300 * MIB, 150 * MIB),  # never more than half of a small machine's memory
    ],
)
def test_the_object_store_is_a_tenth_of_the_memory_within_a_floor_and_a_cap(
    memory: int, store: int
) -> None:
    assert local_ray_options(2, memory)["object_store_memory"] == store


def test_the_local_ray_takes_the_machines_cpus_and_starts_nothing_it_does_not_need() -> None:
    options = local_ray_options(3, 16 * GIB)
    assert options["num_cpus"] == 3
    assert options["include_dashboard"] is False
    assert options["_system_config"] == {
        "enable_worker_prestart": False,
        "prestart_worker_first_driver": False,
    }
    assert local_ray_options(0, 16 * GIB)["num_cpus"] == 1  # never zero CPUs


def test_the_default_pool_is_one_actor_per_cpu_and_never_more_than_the_chunks() -> None:
    assert pool_size(cpus=2, chunks=16) == 2
    assert pool_size(cpus=8, chunks=3) == 3
    assert pool_size(cpus=0, chunks=5) == 1


def test_the_cpus_are_the_affinity_within_a_cgroup_quota(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_ray_sizing, "_CGROUP", tmp_path)  # a cgroup v2 folder of our own
    affinity = len(os.sched_getaffinity(0))
    assert _ray_sizing.machine_cpus() == affinity  # no cpu.max: no quota
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert _ray_sizing.machine_cpus() == affinity
    (tmp_path / "cpu.max").write_text("50000 100000\n")  # half a CPU: one
    assert _ray_sizing.machine_cpus() == 1
    (tmp_path / "cpu.max").write_text("6400000 100000\n")  # 64 CPUs of quota: the affinity
    assert _ray_sizing.machine_cpus() == affinity


def test_the_memory_is_what_is_available_within_a_cgroup_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_ray_sizing, "_CGROUP", tmp_path)
    free = _ray_sizing.available_memory()
    assert free > 0
    (tmp_path / "memory.max").write_text("max\n")
    (tmp_path / "memory.current").write_text(f"{100 * MIB}\n")
    assert abs(_ray_sizing.available_memory() - free) < 256 * MIB  # unlimited: the system's
    (tmp_path / "memory.max").write_text(f"{612 * MIB}\n")
    assert _ray_sizing.available_memory() == 512 * MIB  # the limit less what the group uses


def test_a_session_the_caller_started_keeps_its_size_and_actors_win(ray_cluster: Any) -> None:
    from pairwise_polars.runs import _ray_run

    with _ray_run.connected():  # the conftest's session: four CPUs on a two-CPU machine
        assert ray_cluster.cluster_resources()["CPU"] == 4
        assert _ray_run._pool_size(None, 10) == 4
        assert _ray_run._pool_size(3, 10) == 3
    assert ray_cluster.is_initialized()  # not shut down: it was not this run's


DRIVER = """
import json, sys
import ray
from pairwise_polars.runs import _ray_sizing, score_parquet
from pairwise_polars.runs._ray_run import connected

# A machine of two CPUs and 4 GiB free: what the run reads of the machine
_ray_sizing.machine_cpus = lambda: 2
_ray_sizing.available_memory = lambda: 4 * 2**30
source, destination = sys.argv[1:3]
with connected():  # what score_parquet(runner="ray") does when no Ray is running
    resources = ray.cluster_resources()
    run = score_parquet(source, destination, runner="ray", chunk_size=150, progress=False)
print(json.dumps({"cpus": resources["CPU"], "store": resources["object_store_memory"],
                  "chunks": run.n_chunks, "after": ray.is_initialized()}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_ray_the_run_starts_is_sized_for_the_machine_and_equals_local(tmp_path: Path) -> None:
    pytest.importorskip("ray")  # the driver starts Ray: not in a venv without the extra
    source = tmp_path / "jobs.parquet"
    jobs(groups=60).write_parquet(source)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # never a remote Ray
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(source), str(tmp_path / "ray")],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["cpus"] == 2  # what the sizing read of the machine
    # A tenth of the 4 GiB (Ray's default: 30 % of the machine's memory), within Ray's rounding.
    assert abs(seen["store"] - int(4 * GIB * 0.10)) < MIB
    assert seen["chunks"] > 1 and seen["after"] is False  # the Ray it started is shut down
    local = score_parquet(source, tmp_path / "local", chunk_size=150, progress=False)
    key = ["pair_id", "metric"]
    on_ray = pl.read_parquet(tmp_path / "ray" / "scored" / "*.parquet").sort(key)
    assert on_ray.drop("latency_s").equals(local.scored().collect().sort(key).drop("latency_s"))
    assert pl.read_parquet(tmp_path / "ray" / "summary.parquet").equals(local.summary)
