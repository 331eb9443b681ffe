"""What a parquet run is asked to do, resolved and checked: the runner, the pairing options
with their defaults, the fingerprint the journal compares on resume, and the warning for a
source whose groups are scattered."""

from __future__ import annotations

import hashlib
import warnings
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any

from pairwise_polars._errors import OptionError, PairwiseWarning
from pairwise_polars.judges import traits_of
from pairwise_polars.metrics import Metric
from pairwise_polars.pairing import ColumnNames, Columns, PairingOptions
from pairwise_polars.runs._chunks import ChunkLayout, file_fingerprint
from pairwise_polars.runs._journal import PAIRING_DEFAULTS
from pairwise_polars.scoring import ScoringSpec


def runner_module(runner: object) -> ModuleType | None:
    """The Ray runner's module for ``"ray"`` (imported only then), None for ``"local"``."""
    if runner == "local":
        return None
    if runner != "ray":
        raise OptionError(f'runner must be "local" or "ray", got {runner!r}.')
    try:
        from pairwise_polars.runs import _ray_run
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != "ray":
            raise
        raise OptionError(
            'runner="ray" needs Ray, which is not installed here: install the extra with '
            "pip install 'pairwise-polars[ray]' (or use runner=\"local\").",
        ) from exc
    return _ray_run


def warn_if_scattered(layout: ChunkLayout, group_by: str) -> None:
    n_chunks = len(layout.chunks)
    if n_chunks > 1 and layout.rows_read > 3 * layout.n_rows:
        warnings.warn(
            f"The rows of a group are scattered over the source, so each of the "
            f"{n_chunks} chunks reads about {layout.rows_read // n_chunks:,} of "
            f"its {layout.n_rows:,} rows. The run works, but reads the text many times: sort "
            f"the source by {group_by!r} once (pl.scan_parquet(source).sort({group_by!r})"
            ".sink_parquet(path)), or raise chunk_size.",
            PairwiseWarning,
            stacklevel=3,
        )


def run_columns(pairing: PairingOptions) -> Columns:
    names = {k: v for k, v in pairing.items() if k in ColumnNames.__annotations__}
    return Columns.of(pairing.get("columns"), names, caller="score_parquet")


def resolved_pairing(pairing: PairingOptions, strategy: str) -> dict[str, Any]:
    """The pairing options as resolved values: every column name, the strategy's roles (the
    reference for ``group``, the poles for ``contrastive``), the control role and
    ``on_invalid``, defaults included. Recorded in the journal, so the same run compares equal
    however it was asked for (``columns=`` or keywords, defaults left out or spelled out, from
    Python or the CLI)."""
    columns = run_columns(pairing)
    names = ColumnNames.__annotations__
    resolved: dict[str, Any] = {name: getattr(columns, name) for name in names}
    if strategy == "group":
        resolved["reference"] = pairing.get("reference", PAIRING_DEFAULTS["reference"])
    else:
        resolved["poles"] = list(pairing.get("poles", PAIRING_DEFAULTS["poles"]))
    resolved["control"] = pairing.get("control", PAIRING_DEFAULTS["control"])
    resolved["on_invalid"] = pairing.get("on_invalid", PAIRING_DEFAULTS["on_invalid"])
    return dict(sorted(resolved.items()))


def run_fingerprint(
    layout: ChunkLayout,
    strategy: str,
    pairing: dict[str, Any],
    spec: ScoringSpec,
    chunk_size: int,
    keep_text: bool,
    outcomes: Metric | None = None,
) -> dict[str, Any]:
    """What the journal records of a run, to refuse resuming another one. Its keys and values
    are those of runs recorded before :class:`ScoringSpec`, so those runs resume; outcomes read
    by the judge are recorded only when asked for, for the same reason."""
    read_by = {} if outcomes is None else {"outcomes": metric_fingerprint(outcomes)}
    return {
        "source": [
            {k: f[k] for k in ("size", "mtime_ns")}
            for f in file_fingerprint(layout.files, layout.storage_options)
        ],
        "pairs": {
            "n_rows": layout.n_rows,
            "n_pairs": layout.n_pairs,
            "n_groups": layout.n_groups,
            "digest": layout.digest,
        },
        "strategy": strategy,
        "pairing": pairing,
        "metrics": [metric_fingerprint(m) for m in spec.metrics],
        "judge": {"name": spec.judge.name, "identity": dict(traits_of(spec.judge).identity)},
        **spec.fingerprint(),
        "chunk_size": chunk_size,
        "keep_text": keep_text,
        **read_by,
    }


def metric_fingerprint(metric: Metric) -> dict[str, Any]:
    templates = hashlib.sha256(f"{metric.system}\x1f{metric.user}".encode()).hexdigest()[:16]
    return {
        "name": metric.name,
        "version": metric.version,
        "max_score": metric.max_score,
        "params": dict(metric.params),
        "templates": templates,
    }


def package_version() -> str:
    try:
        return version("pairwise-polars")
    except PackageNotFoundError:
        return "unknown"
