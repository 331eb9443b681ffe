"""Headless Chromium driven over the DevTools protocol (a websocket, spoken with aiohttp): open a
page at a given window size, measure its element boxes with a script run by DevTools (the page
itself stays script-free under its CSP), take a screenshot, and collect what the page logged.

Chromium comes from Debian's ``chromium`` package (``.ci/run`` installs it); it is started
offline (no background networking, no component updates, no sync) with a throwaway profile.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
OFFLINE = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-default-apps", "--hide-scrollbars", "--mute-audio",
)  # fmt: skip


@dataclass
class Visit:
    """What one page visit measured."""

    problems: list[str]
    """The layout check's findings (empty: nothing overflows or overlaps)."""
    screenshot: bytes
    logged: list[str] = field(default_factory=list)
    """Console messages, errors, CSP violations and uncaught exceptions."""
    measured: dict[str, Any] = field(default_factory=dict)


class Chromium:
    """One browser process for many visits (a start costs a second or two)."""

    def __init__(self, profile: Path) -> None:
        assert CHROMIUM is not None
        profile.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [CHROMIUM, *OFFLINE, "--remote-debugging-port=0", f"--user-data-dir={profile}",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.is_file() and len(port_file.read_text().splitlines()) >= 2):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self.url = f"ws://127.0.0.1:{port}{path}"

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def visit(self, url: str, width: int, height: int, script: str, *, prepare: str = "") -> Visit:
        """Open ``url`` in a ``width`` x ``height`` window, run ``prepare`` (e.g. open every
        ``<details>``), then ``script`` (which returns ``{problems, measured}``), and take a
        screenshot of the window."""
        return asyncio.run(self._visit(url, width, height, script, prepare))

    async def _visit(self, url: str, width: int, height: int, script: str, prepare: str) -> Visit:
        ids = itertools.count(1)
        logged: list[str] = []
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(self.url, max_msg_size=0) as ws,
        ):

            async def call(method: str, session: str | None = None, **params: Any) -> Any:
                message_id = next(ids)
                message: dict[str, Any] = {"id": message_id, "method": method, "params": params}
                if session:
                    message["sessionId"] = session
                await ws.send_str(json.dumps(message))
                while True:
                    reply = json.loads((await ws.receive(timeout=60)).data)
                    if reply.get("id") == message_id:
                        if "error" in reply:
                            raise RuntimeError(f"{method}: {reply['error']}")
                        return reply.get("result", {})
                    _note(reply, logged)

            target = (await call("Target.createTarget", url="about:blank"))["targetId"]
            session = (await call("Target.attachToTarget", targetId=target, flatten=True))[
                "sessionId"
            ]
            try:
                for domain in ("Page", "Runtime", "Log"):
                    await call(f"{domain}.enable", session)
                await call(
                    "Emulation.setDeviceMetricsOverride", session, width=width, height=height,
                    deviceScaleFactor=1, mobile=False,
                )  # fmt: skip
                await call("Page.navigate", session, url=url)
                await _until_loaded(call, session)
                if prepare:
                    await call("Runtime.evaluate", session, expression=prepare)
                found = await call(
                    "Runtime.evaluate", session, expression=script, returnByValue=True
                )
                if "exceptionDetails" in found:
                    raise RuntimeError(f"the layout check failed: {found['exceptionDetails']}")
                result = found["result"]["value"]
                shot = await call("Page.captureScreenshot", session, format="png")
            finally:
                await call("Target.closeTarget", targetId=target)
        return Visit(
            problems=result["problems"],
            screenshot=base64.b64decode(shot["data"]),
            logged=logged,
            measured=result.get("measured", {}),
        )


async def _until_loaded(call: Any, session: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = await call(
            "Runtime.evaluate", session, expression="document.readyState", returnByValue=True
        )
        if state["result"].get("value") == "complete":
            return
        await asyncio.sleep(0.05)
    raise RuntimeError("the page did not finish loading")


def _note(event: dict[str, Any], logged: list[str]) -> None:
    method = event.get("method")
    params = event.get("params", {})
    if method == "Log.entryAdded":
        entry = params["entry"]
        logged.append(f"{entry.get('level')}: {entry.get('source')}: {entry.get('text')}")
    elif method == "Runtime.consoleAPICalled":
        args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
        logged.append(f"console.{params.get('type')}: {args}")
    elif method == "Runtime.exceptionThrown":
        details = params["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details.get("text")
        logged.append(f"uncaught: {text}")


LAYOUT_CHECK = (Path(__file__).parent / "layout_check.js").read_text(encoding="utf-8")
"""The layout check run in the page by DevTools: returns ``{problems, measured}``."""
