"""A local Ray that a run started for itself dies with the run: after kill -9 of the driver, no
process of that Ray session is left a few seconds later (issue 29 item 4: Ray's dashboard and
runtime-env agents used to wait about a minute on the dead GCS)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from pairwise_polars.runs import _ray_watchdog

pytest.importorskip("ray")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

DRIVER = """
import ray
from pairwise_polars.runs._ray_run import connected

with connected():  # what score_parquet(runner="ray") does without RAY_ADDRESS
    ray.get(ray.remote(lambda: 1).remote())
    print("ready", flush=True)
    import time
    time.sleep(300)
"""


def _family(pid: int) -> set[int]:
    """``pid`` and every process descended from it."""
    family, grown = {pid}, True
    while grown:
        more = set().union(*(_ray_watchdog.children(p) for p in family)) - family
        family |= more
        grown = bool(more)
    return family


def _name(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:  # ended meanwhile (an idle worker)
        return b""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


def test_no_ray_process_outlives_a_killed_driver(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert driver.stdout is not None
        assert driver.stdout.readline() == b"ready\n"
        session = _family(driver.pid) - {driver.pid}
        names = {_name(p) for p in session}
        # The raylet's agents are what used to linger; the session must include them.
        assert b"ray::DashboardAgent" in names or b"ray::RuntimeEnvAgent" in names, names
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
        deadline = time.monotonic() + 10
        while (left := {p for p in session if _alive(p)}) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"Ray processes alive 10 s after the driver died: {sorted(left)}"
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        if driver.stdout is not None:
            driver.stdout.close()
