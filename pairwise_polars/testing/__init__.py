"""A local OpenAI-compatible server for testing judges over real HTTP, with injectable faults.

Example:
    >>> import openai
    >>> from pairwise_polars.testing import Faults, TestServer
    >>> with TestServer(faults=Faults(always="500")) as server:
    ...     client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    ...     try:
    ...         client.chat.completions.create(
    ...             model="m", messages=[{"role": "user", "content": "hi"}]
    ...         )
    ...     except openai.InternalServerError:
    ...         pass
    ...     client.close()
    >>> server.stats.outcomes["500"]
    1

Run one from a shell with ``python -m pairwise_polars.testing --port 8000 --latency 0.05``.
Pytest fixtures live in :mod:`pairwise_polars.testing.fixtures` (imports pytest).
"""

from ._batches import BatchSettings
from ._cli import serve
from ._faults import FaultName, Faults
from ._hostile import HostileMode, HostileServer
from ._judge_behaviours import BehaviourName, JudgeBehaviour, judge_behaviour
from ._received import ReceivedRequest
from ._server import CapturedRequest, ReplyHook, ServerStats, TestServer

__all__ = [
    "BatchSettings",
    "BehaviourName",
    "CapturedRequest",
    "FaultName",
    "Faults",
    "HostileMode",
    "HostileServer",
    "JudgeBehaviour",
    "ReceivedRequest",
    "ReplyHook",
    "ServerStats",
    "TestServer",
    "judge_behaviour",
    "serve",
]
