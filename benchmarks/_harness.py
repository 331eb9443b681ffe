"""Run one benchmark task in a fresh Python process, watched so it cannot exhaust the machine.

The child prints one JSON object as its last stdout line (see :func:`report`); the parent
(:func:`run_child`) adds the wall time and the peak RSS. The parent polls the child's RSS and
kills it above a limit, or when the machine itself runs low on memory (other work shares it),
and returns ``{"guarded": why}`` instead of a result; ``why`` starts with ``LOW_MEMORY`` in the
second case, which is the machine's state rather than the task's, so callers may retry.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

GIB = 2**30
LOW_MEMORY = "machine low on memory"
_POLL_S = 0.02


@dataclass
class Outcome:
    """The runs of one task, or why it was stopped."""

    task: Any
    runs: list[dict] = field(default_factory=list)
    guarded: str | None = None

    def median(self, key: str) -> float | None:
        values = [r[key] for r in self.runs if r.get(key) is not None]
        return statistics.median(values) if values else None


def report(result: dict) -> None:
    """Child side: print the result with this process's peak RSS.

    The peak is ``VmHWM`` of the child's own memory map. ``ru_maxrss`` from ``wait4`` would not
    do: Linux carries the parent's high-water mark over fork + exec into it.
    """
    result["peak_rss"] = status_kib(os.getpid(), "VmHWM") * 1024
    print(json.dumps(result))


def run_child(
    cmd: Sequence[str], *, mem_limit: int, min_available: int, cwd: str | os.PathLike
) -> dict:
    """Run ``cmd``; return its JSON result with ``wall_s`` and ``peak_rss`` (bytes) added."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd)
        reason: list[str] = []
        peak_seen = [0]
        done = threading.Event()

        def watch() -> None:
            while not done.wait(_POLL_S):
                rss = status_kib(proc.pid, "VmRSS") * 1024
                peak_seen[0] = max(peak_seen[0], status_kib(proc.pid, "VmHWM") * 1024)
                if rss > mem_limit:
                    reason.append(f"over memory guard: RSS > {mem_limit / GIB:.0f} GiB")
                elif available_bytes() < min_available:
                    reason.append(f"{LOW_MEMORY}, at RSS {rss / GIB:.1f} GiB")
                if reason:
                    proc.kill()
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        proc.wait()
        wall = time.perf_counter() - start
        done.set()
        watcher.join()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if reason:
        return {"guarded": reason[0], "peak_rss": peak_seen[0], "wall_s": wall}
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[1:4])} failed ({proc.returncode}):\n{stderr}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result["peak_rss"] = max(result["peak_rss"], peak_seen[0])
    result["wall_s"] = wall
    return result


def wait_for_memory(needed: int, timeout_s: float) -> bool:
    """Wait until the machine has ``needed`` bytes available; False if it timed out."""
    deadline = time.monotonic() + timeout_s
    while available_bytes() < needed:
        if time.monotonic() > deadline:
            return False
        time.sleep(5)
    return True


def status_kib(pid: int, key: str) -> int:
    """A ``kB`` field of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``); 0 once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def available_bytes() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0
