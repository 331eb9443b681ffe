"""A local Ray that a run started for itself shares the run's fate.

``ray.init()`` ties the Ray processes it starts to the driver (they die with it), but not the
agents the raylet starts (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``): when the driver is
killed they notice their raylet is gone, then wait up to a minute on a report to the dead GCS
before they exit. The run starts this watchdog beside the local Ray it starts: a small process
that records every descendant of the Ray processes while the driver lives, and kills those
still alive as soon as the driver is gone (its stdin, a pipe only the driver holds, reads
end-of-file: on a clean shutdown as on kill -9). Linux only (it reads ``/proc``); elsewhere
there is no watchdog and the agents end on their own.

Run as a script, ``python _ray_watchdog.py PID...``; nothing here imports Ray.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

POLL_S = 0.25
"""How often the watchdog looks for new Ray processes (workers come and go)."""
_PROC = Path("/proc")


def start(roots: list[int]) -> subprocess.Popen[bytes] | None:
    """Start a watchdog over ``roots`` (the processes ``ray.init()`` started) and their
    descendants; close its stdin (:func:`stop`) once Ray is shut down. None off Linux."""
    if not roots or not sys.platform.startswith("linux"):
        return None
    # Run as a script (only the standard library is imported: it starts in a moment), and
    # wait for its first look at the processes: a driver killed right after this still has
    # its Ray's agents recorded while they are the raylet's children.
    watchdog = subprocess.Popen(
        [sys.executable, "-I", __file__, *map(str, roots)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert watchdog.stdout is not None
    watchdog.stdout.readline()  # "watching" (or end-of-file, should it fail)
    watchdog.stdout.close()
    return watchdog


def stop(watchdog: subprocess.Popen[bytes] | None) -> None:
    """Let the watchdog clear what is left of the Ray it watched, and wait for it."""
    if watchdog is None:
        return
    with contextlib.suppress(OSError):
        assert watchdog.stdin is not None
        watchdog.stdin.close()
    try:
        watchdog.wait(timeout=10)
    except subprocess.TimeoutExpired:
        watchdog.kill()
        watchdog.wait()


def children(pid: int) -> set[int]:
    """The live children of ``pid``."""
    return {child for child, (parent, _) in _table().items() if parent == pid}


def _table() -> dict[int, tuple[int, int]]:
    """Every process: its parent and start time (a pid reused later has another)."""
    table: dict[int, tuple[int, int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (name) "
        table[int(entry.name)] = (int(fields[1]), int(fields[19]))
    return table


def _watch(roots: set[int]) -> dict[int, int]:
    """Record the roots' descendants until stdin ends; what was seen (pid: start time)."""
    seen: dict[int, int] = {}
    announced = False
    while True:
        table = _table()
        family = {pid for pid in roots if pid in table}
        grown = True
        while grown:
            more = {pid for pid, (parent, _) in table.items() if parent in family} - family
            family |= more
            grown = bool(more)
        seen.update({pid: table[pid][1] for pid in family})
        if not announced:
            print("watching", flush=True)
            announced = True
        ready, _, _ = select.select([sys.stdin.buffer], [], [], POLL_S)
        if ready and not os.read(sys.stdin.fileno(), 1024):
            return seen


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the terminal: the driver cleans up
    seen = _watch({int(pid) for pid in argv})
    table = _table()
    for pid, started in seen.items():
        if table.get(pid, (0, -1))[1] == started:  # the same process, not a reused pid
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    main(sys.argv[1:])
