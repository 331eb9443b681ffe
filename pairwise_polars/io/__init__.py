"""Reading the input and writing outputs: every accepted kind of data normalised to one polars
LazyFrame, results given back in the kind the caller passed; input files (parquet, CSV, TSV,
NDJSON, JSON; folders and globs) found and checked before anything is read; outputs written
with errors that say which file and why."""

from pairwise_polars.io._formats import output_format, refuse_overwriting_inputs, write_frame
from pairwise_polars.io._frames import DataLike, finish, open_data, to_lazy
from pairwise_polars.io._outputs import (
    check_folder_writable,
    check_writable,
    likely_cause,
    output_error,
    write_parquet,
    write_text,
)
from pairwise_polars.io._provenance import PROVENANCE_KEY, provenance
from pairwise_polars.io._readers import scan_data, scan_source
from pairwise_polars.io._sources import (
    FOLDER_FORMATS,
    RESULTS_FOLDER,
    SUFFIXES,
    Format,
    PathLike,
    Source,
    file_format,
    input_files,
    is_paths,
    source_files,
    uri_format,
)
from pairwise_polars.io._stores import (
    StorageOptions,
    checked_options,
    is_secret_option,
    is_uri,
    redact_options,
    secret_values,
)

__all__ = [
    "FOLDER_FORMATS",
    "PROVENANCE_KEY",
    "RESULTS_FOLDER",
    "SUFFIXES",
    "DataLike",
    "Format",
    "PathLike",
    "Source",
    "StorageOptions",
    "check_folder_writable",
    "check_writable",
    "checked_options",
    "file_format",
    "finish",
    "input_files",
    "is_paths",
    "is_secret_option",
    "is_uri",
    "likely_cause",
    "open_data",
    "output_error",
    "output_format",
    "provenance",
    "redact_options",
    "refuse_overwriting_inputs",
    "scan_data",
    "scan_source",
    "secret_values",
    "source_files",
    "to_lazy",
    "uri_format",
    "write_frame",
    "write_parquet",
    "write_text",
]
