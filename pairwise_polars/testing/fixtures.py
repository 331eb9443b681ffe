"""Pytest fixtures around :class:`~pairwise_polars.testing.TestServer` (this module imports pytest).

Wire them into a ``conftest.py`` by importing the fixture objects::

    from pairwise_polars.testing.fixtures import judge_server, judge_server_session  # noqa: F401

- ``judge_server_session`` (session scope): one server for the whole run, started on first use.
- ``judge_server`` (function scope): that same server, reset before each test (constructor
  latency, faults and reply restored, fault draws reseeded, counters zeroed), so a test may set
  ``judge_server.faults`` / ``.latency`` / ``.reply`` freely.

Another configuration (a key, a model list, no json_schema support) gets its own pair::

    keyed_server_session, keyed_server = make_judge_server_fixtures(
        "keyed_server", api_key="test-key", models=["judge-small"]
    )
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ._server import TestServer

__all__ = ["judge_server", "judge_server_session", "make_judge_server_fixtures"]


def make_judge_server_fixtures(name: str = "judge_server", **server_kwargs: Any) -> tuple[Any, Any]:
    """Two fixtures: ``<name>_session`` (one server per session) and ``<name>`` (the same server,
    reset before each test). ``server_kwargs`` go to :class:`TestServer`.

    Example:
        >>> session_fixture, fixture = make_judge_server_fixtures("slow_judge", latency=0.05)
    """

    @pytest.fixture(scope="session", name=f"{name}_session")
    def _session_server() -> Iterator[TestServer]:
        with TestServer(**server_kwargs) as server:
            yield server

    @pytest.fixture(name=name)
    def _fresh_server(request: pytest.FixtureRequest) -> TestServer:
        server: TestServer = request.getfixturevalue(f"{name}_session")
        server.reset()
        return server

    return _session_server, _fresh_server


judge_server_session, judge_server = make_judge_server_fixtures()
