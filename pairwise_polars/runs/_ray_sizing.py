"""How big a local Ray the run starts for itself, and how it spreads a run over the CPUs.

When no Ray is running and none is named (no ``RAY_ADDRESS``), the run starts one on this
machine. Ray's own defaults size it for a machine Ray has to itself: 30 % of the memory for the
object store, a dashboard, one prestarted worker process per CPU. The run sizes it for the
process instead: the CPUs this process may run on (its affinity, within a cgroup's CPU quota), an
object store of a tenth of the available memory (at least 256 MiB, at most 2 GiB; a run streams
chunk by chunk and needs little of it), no dashboard, quiet logs, and no workers started before
a task needs them. A session the caller started, or a cluster, is used as it is.

:func:`local_ray_options` is a pure function of the machine's CPUs and memory (what
:func:`machine_cpus` and :func:`available_memory` read), so the sizing is tested without Ray.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any

MIB = 2**20
STORE_FRACTION = 0.10
"""The object store's share of the available memory."""
STORE_FLOOR, STORE_CAP = 256 * MIB, 2048 * MIB
CPUS_PER_WORKER = 0.25
"""A judge actor's CPU: actors that mostly wait on the judge share a CPU, and the read and
shuffle tasks always find one (a pool holding every CPU would starve them)."""
_CGROUP = Path("/sys/fs/cgroup")


def local_ray_options(cpus: int, memory: int) -> dict[str, Any]:
    """``ray.init`` keywords for a local Ray on a machine with ``cpus`` usable CPUs and
    ``memory`` bytes available.

    >>> options = local_ray_options(2, 24 * 2**30)
    >>> options["num_cpus"], options["object_store_memory"] // 2**20
    (2, 2048)
    >>> local_ray_options(1, 2**30)["object_store_memory"] // 2**20
    256
    """
    store = min(STORE_CAP, max(STORE_FLOOR, int(memory * STORE_FRACTION)))
    return {
        "num_cpus": max(1, cpus),
        "object_store_memory": min(store, max(memory // 2, 80 * MIB)),  # never half the memory
        "include_dashboard": False,
        "logging_level": logging.ERROR,
        "_system_config": {
            # The raylet starts a worker per CPU as the driver connects; the run's tasks and
            # actors start their own, so those would only cost start-up time and memory.
            "enable_worker_prestart": False,
            "prestart_worker_first_driver": False,
        },
    }


def pool_size(cpus: int, chunks: int) -> int:
    """Judge actors by default: one per CPU, never more than the chunks to score (an actor
    without a chunk would only idle)."""
    return max(1, min(chunks, cpus))


def machine_cpus() -> int:
    """The CPUs this process may use: its CPU affinity, within a cgroup v2 CPU quota."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpu_quota()
    return max(1, min(cpus, quota)) if quota is not None else max(1, cpus)


def available_memory() -> int:
    """Bytes of memory available to this process: the system's available memory, within a
    cgroup v2 memory limit."""
    available = _meminfo_available()
    limit = _read(_CGROUP / "memory.max")
    current = _read(_CGROUP / "memory.current")
    if limit is not None and limit.isdigit() and current is not None and current.isdigit():
        available = min(available, int(limit) - int(current))
    return max(available, 0)


def _cgroup_cpu_quota() -> int | None:
    """The cgroup v2 CPU quota in whole CPUs (rounded up), or None when there is none."""
    text = _read(_CGROUP / "cpu.max")
    if text is None:
        return None
    quota, _, period = text.partition(" ")
    if quota == "max" or not quota.isdigit() or not period.strip().isdigit():
        return None
    return max(1, math.ceil(int(quota) / int(period)))


def _meminfo_available() -> int:
    text = _read(Path("/proc/meminfo"))
    for line in (text or "").splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    try:  # not Linux: the physical memory
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 4096 * MIB


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
