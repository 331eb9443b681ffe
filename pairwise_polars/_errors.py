"""The package's exceptions, one tree.

    PairwiseError
    ├── OptionError (ValueError)        an option that cannot be used (strategy, confidence, ...)
    ├── ColumnError (KeyError)          a missing or mistyped input column
    ├── ScoreError (ValueError)         scores that cannot be summarised (outside [0, 1])
    ├── GateError (ValueError)          a gate that cannot be checked (threshold, unknown metric)
    ├── InvalidGroupsError (ValueError) groups that cannot form pairs
    ├── TemplateError (ValueError)      a metric template that cannot render
    ├── MetricError (ValueError)        an unknown metric, or one of the wrong kind
    ├── ManifestError (ValueError)      a manifest that fails validation
    ├── JudgeError                      a judge failure that stops the run (bad key, unknown model)
    ├── RunStateError (ValueError)      a parquet run's destination holds another run
    ├── LexiconError (ValueError)       lexicons or placeholders that cannot be used
    ├── DataSourceError (ValueError)    unsupported data, missing or unreadable input files
    ├── CacheError (OSError)            a cache file that cannot be opened, read or written
    └── OutputError (OSError)           an output that cannot be written (no space, no access)

    PairwiseWarning (UserWarning)       something was left out and the run went on
    ├── EmptyDataWarning                the input has no rows: nothing to pair
    └── ThresholdWarning                a threshold that makes a gate vacuous or impossible

Catch ``PairwiseError`` to handle anything raised on purpose by the package.

An error whose advice names settings carries them as :class:`Fix` records (``error.fixes``),
beside the message without that advice (``error.detail``): the message says it the Python way
(``on_invalid="skip"``), and the command line says it with its flag or manifest key
(``--on-invalid skip``, ``on_invalid: skip``) from the same fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Fix:
    """Settings an error's advice names: ``action`` says what they do (``"columns"``: map input
    columns; ``"cast"``: store a column as text; ``"skip_invalid"``: leave invalid groups out;
    ``"api_key"``: give the judge a key or a local server; ``"base_url"``: point the judge at a
    server that answers; ``"overwrite"``: start a run over;
    ``"cache"``: another cache or none; ``"attribute_under_test"``: name the attribute;
    ``"summary_columns"``: slice and group columns that exist; ``"local_runner"``: the local
    runner; ``"chat_judge"``: a chat judge instead of a Batch API one), and
    ``settings`` their names and example values."""

    action: str
    settings: Mapping[str, str] = field(default_factory=dict)


class PairwiseError(Exception):
    """Base class of every error the package raises on purpose.

    ``detail`` is the message without its Python-spelled advice and ``fixes`` the settings that
    advice names (both optional), so front ends can say the fix their own way."""

    def __init__(self, *args: object, detail: str | None = None, fixes: Sequence[Fix] = ()) -> None:
        super().__init__(*args)
        self.detail = detail
        self.fixes = tuple(fixes)


class OptionError(PairwiseError, ValueError):
    """An argument or setting that cannot be used: an unknown strategy, a confidence outside
    (0, 1), a chunk size below 1, a concurrency below 1, ..."""


class ColumnError(PairwiseError, KeyError):
    """A required column is missing or has the wrong type."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ScoreError(PairwiseError, ValueError):
    """Scores that cannot be summarised: outside [0, 1] (raw rubric answers, not ``score``)."""


class GateError(PairwiseError, ValueError):
    """A gate that cannot be checked: a threshold that is not a number in [0, 1], or one for a
    metric the summary does not have."""


class InvalidGroupsError(PairwiseError, ValueError):
    """Some groups cannot form pairs (no reference, several references, a missing pole...)."""


class TemplateError(PairwiseError, ValueError):
    """A metric template cannot be loaded or needs variables the pair frame lacks."""


class MetricError(PairwiseError, ValueError):
    """An unknown metric, or a metric that does not belong in a pairwise call."""


class ManifestError(PairwiseError, ValueError):
    """A manifest fails validation; the message lists every problem found."""


class JudgeError(PairwiseError):
    """A judge failure that retrying cannot fix; the run stops, results so far stay cached."""


class RunStateError(PairwiseError, ValueError):
    """A parquet run's destination (see ``score_parquet``) holds a different run."""


class LexiconError(PairwiseError, ValueError):
    """A lexicon or a prompt's placeholders cannot be used for counterfactuals."""


class DataSourceError(PairwiseError, ValueError):
    """The data cannot be read: an unsupported kind of object, files that don't exist, a file
    that is not the format its name says, files that do not share one schema."""


class CacheError(PairwiseError, OSError):
    """A cache file cannot be opened, read or written (corrupt, not a database, no access, a
    full disk). The file is never modified or replaced."""


class OutputError(PairwiseError, OSError):
    """An output file or folder cannot be written (no space left, no permission, a file in the
    way of a folder)."""


class PairwiseWarning(UserWarning):
    """Something was left out or looks wrong, and the run went on (e.g. skipped groups).

    Like errors, it may carry ``detail`` and :class:`Fix` records."""

    def __init__(self, *args: object, detail: str | None = None, fixes: Sequence[Fix] = ()) -> None:
        super().__init__(*args)
        self.detail = detail
        self.fixes = tuple(fixes)


class EmptyDataWarning(PairwiseWarning):
    """The input has no rows, so there is nothing to pair (the command line stops with exit 2)."""


class ThresholdWarning(PairwiseWarning):
    """A threshold that makes a gate vacuous (it always passes) or impossible (it can never
    pass), e.g. ``max_divergence_rate=0`` or ``aggregate(equivalence_threshold=1)``."""
