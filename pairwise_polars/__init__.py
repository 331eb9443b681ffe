"""pairwise_polars: counterfactual fairness testing of LLM systems, dataframe-native."""

from pairwise_polars import _namespace  # noqa: F401  (registers frame.pairwise)
from pairwise_polars._errors import (
    CacheError,
    ColumnError,
    DataSourceError,
    EmptyDataWarning,
    GateError,
    InvalidGroupsError,
    JudgeError,
    LexiconError,
    ManifestError,
    MetricError,
    OptionError,
    OutputError,
    PairwiseError,
    PairwiseWarning,
    RunStateError,
    ScoreError,
    TemplateError,
    ThresholdWarning,
)
from pairwise_polars._former import OFFLINE_NAMES as _OFFLINE_NAMES
from pairwise_polars._former import former_names as _former_names
from pairwise_polars._version import __version__
from pairwise_polars.comparison import compare, gate_compare
from pairwise_polars.counterfactual import (
    OpenAITarget,
    acollect_responses,
    collect_responses,
    counterfactuals,
)
from pairwise_polars.engine import JudgementCache, Price, default_cache_path
from pairwise_polars.judges import (
    AnthropicBatchJudge,
    AnthropicJudge,
    HeuristicJudge,
    Judge,
    JudgeTraits,
    OpenAIBatchJudge,
    OpenAIJudge,
    Panel,
)
from pairwise_polars.judges.heuristic import heuristic_scores
from pairwise_polars.labels import sample_for_labelling
from pairwise_polars.metrics import Metric, get_metric, load_metric, metric_names
from pairwise_polars.outcome import disparities, outcomes
from pairwise_polars.pairing import Columns, check_groups, form_pairs
from pairwise_polars.report import write_report
from pairwise_polars.runs import ParquetRun, ascore_parquet, score_parquet
from pairwise_polars.scoring import (
    Plan,
    ScoringSpec,
    Usage,
    ascore,
    ascore_pairs,
    plan,
    score,
    score_pairs,
)
from pairwise_polars.summary import (
    GateResult,
    JudgeAgreement,
    aggregate,
    gate,
    judge_agreement,
    judge_report,
    summarize,
    verdict_stability,
)

__all__ = [
    "AnthropicBatchJudge",
    "AnthropicJudge",
    "CacheError",
    "ColumnError",
    "Columns",
    "DataSourceError",
    "EmptyDataWarning",
    "GateError",
    "GateResult",
    "HeuristicJudge",
    "InvalidGroupsError",
    "Judge",
    "JudgeAgreement",
    "JudgeError",
    "JudgeTraits",
    "JudgementCache",
    "LexiconError",
    "ManifestError",
    "Metric",
    "MetricError",
    "OpenAIBatchJudge",
    "OpenAIJudge",
    "OpenAITarget",
    "OptionError",
    "OutputError",
    "PairwiseError",
    "PairwiseWarning",
    "Panel",
    "ParquetRun",
    "Plan",
    "Price",
    "RunStateError",
    "ScoreError",
    "ScoringSpec",
    "TemplateError",
    "ThresholdWarning",
    "Usage",
    "__version__",
    "acollect_responses",
    "aggregate",
    "ascore",
    "ascore_pairs",
    "ascore_parquet",
    "check_groups",
    "collect_responses",
    "compare",
    "counterfactuals",
    "default_cache_path",
    "disparities",
    "form_pairs",
    "gate",
    "gate_compare",
    "get_metric",
    "heuristic_scores",
    "judge_agreement",
    "judge_report",
    "load_metric",
    "metric_names",
    "outcomes",
    "plan",
    "sample_for_labelling",
    "score",
    "score_pairs",
    "score_parquet",
    "summarize",
    "verdict_stability",
    "write_report",
]

# "offline" named the heuristic judge and the parquet runs; each has its own name now.
__getattr__ = _former_names(__name__, {**_OFFLINE_NAMES, "OfflineRun": "ParquetRun"})
