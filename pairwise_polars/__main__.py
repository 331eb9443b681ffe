"""``python -m pairwise_polars``: the same as the ``pairwise-polars`` command."""

import sys

from pairwise_polars.cli import main

sys.exit(main())
