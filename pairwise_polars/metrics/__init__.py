"""Pairwise metrics: shipped YAML definitions with Jinja2 chat templates, and user metric files."""

from pairwise_polars.metrics._compiled import compiles, render_messages
from pairwise_polars.metrics._metric import (
    PAIR_VARIABLES,
    Metric,
    get_metric,
    load_metric,
    metric_names,
    pairwise_metrics,
)

__all__ = [
    "PAIR_VARIABLES",
    "Metric",
    "compiles",
    "get_metric",
    "load_metric",
    "metric_names",
    "pairwise_metrics",
    "render_messages",
]
