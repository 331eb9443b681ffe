"""Outputs for CI systems: a JUnit XML file (one test case per gate check, and one per metric for
judge failures), which every CI system renders, and the Markdown that GitHub Actions shows on a
run's page (``$GITHUB_STEP_SUMMARY``). Both are built from the gate checks as they come, so a new
gate appears with no change here."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.etree import ElementTree as ET

import polars as pl

from pairwise_polars.report._comparison import readable_comparison, unmatched_line
from pairwise_polars.report._tables import markdown_table, readable_summary
from pairwise_polars.summary import SCOPE, GateResult
from pairwise_polars.summary._gate import CHECK_SCHEMA

_CHECK_FIELDS = ("metric", "slice", "gate", "threshold", "observed", "passed", "note")


@dataclass(frozen=True)
class Outcome:
    """One gated result: a manifest target, or the data a command summarised; or, with
    ``error`` set, a target that could not run (its summary and gates empty)."""

    name: str
    summary: pl.DataFrame
    gates: GateResult
    seconds: float = 0.0
    about: Mapping[str, str] = field(default_factory=dict)
    """Lines that say what was run (data, strategy, judge, ...), shown with the result."""
    error: str | None = None
    comparison: pl.DataFrame | None = None
    """With a baseline: :func:`~pairwise_polars.compare` of the baseline and this run."""

    @classmethod
    def failed(cls, name: str, error: str, *, about: Mapping[str, str] | None = None) -> Outcome:
        """A target that stopped with ``error`` before it had a verdict."""
        return cls(name, pl.DataFrame(), GateResult(False, pl.DataFrame(schema=CHECK_SCHEMA)),
                   about=dict(about or {}), error=error)  # fmt: skip


def _comparison(gate: str) -> str:
    return ">=" if gate.startswith("min_") else "<=" if gate.startswith("max_") else "vs"


def _number(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value else "0"
    return str(value)


def check_name(check: Mapping[str, Any]) -> str:
    """``pairwise-bias [dimension=age] max_mean_divergence <= 0.2``: a check as a test name."""
    gate = str(check["gate"])
    return (
        f"{check['metric']} [{check['slice']}] {gate} {_comparison(gate)} "
        f"{_number(check['threshold'])}"
    )


def _error_rows(summary: pl.DataFrame) -> list[dict[str, Any]]:
    overall = summary.filter(pl.col(SCOPE) == "overall") if SCOPE in summary.columns else summary
    wanted = [c for c in ("metric", "n_pairs", "n_scored", "n_errors") if c in overall.columns]
    if len(wanted) < 4:
        return []
    return (
        overall.group_by("metric", maintain_order=True)
        .agg(pl.col("n_pairs", "n_scored", "n_errors").sum())
        .to_dicts()
    )


def junit_xml(outcomes: Sequence[Outcome], *, name: str = "pairwise-polars") -> str:
    """One ``testsuite`` per outcome; in it one ``testcase`` per gate check (a ``failure`` with
    the observed value and the threshold when it fails) and one per metric for judge failures
    (an ``error`` when pairs have no score: unknown is not fair)."""
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    for outcome in outcomes:
        suite = ET.SubElement(root, "testsuite", name=outcome.name, timestamp=stamp)
        if outcome.about:
            properties = ET.SubElement(suite, "properties")
            for key, value in outcome.about.items():
                ET.SubElement(properties, "property", name=str(key), value=str(value))
        counts = _cases(suite, outcome, f"{name}.{outcome.name}")
        if outcome.error is None:
            out = ET.SubElement(suite, "system-out")
            out.text = markdown_table(readable_summary(outcome.summary))
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("skipped", "0")
        suite.set("time", f"{outcome.seconds:.3f}")
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{sum(o.seconds for o in outcomes):.3f}")
    for element in root.iter():  # data (a slice name, an error) may hold what XML 1.0 cannot
        element.attrib.update({k: _xml_text(v) for k, v in element.attrib.items()})
        if element.text:
            element.text = _xml_text(element.text)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _cases(suite: ET.Element, outcome: Outcome, classname: str) -> dict[str, int]:
    """The outcome's test cases in ``suite``: a run error, each gate check, judge failures."""
    counts = {"tests": 0, "failures": 0, "errors": 0}
    if outcome.error is not None:
        counts["tests"] = counts["errors"] = 1
        case = ET.SubElement(suite, "testcase", name=f"{outcome.name} ran to a verdict")
        case.set("classname", classname)
        case.set("time", "0")
        first = outcome.error.splitlines()[0]
        error = ET.SubElement(case, "error", message=first, type="run_error")
        error.text = outcome.error
    for check in outcome.gates.checks.iter_rows(named=True):
        counts["tests"] += 1
        case = ET.SubElement(suite, "testcase", name=check_name(check))
        case.set("classname", f"{classname}.{check['metric']}")
        case.set("time", "0")
        if not check["passed"]:
            counts["failures"] += 1
            _failure(case, check)
    for row in _error_rows(outcome.summary):
        counts["tests"] += 1
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{classname}.{row['metric']}",
            name=f"{row['metric']} [overall] judged without errors",
        )
        case.set("time", "0")
        if row["n_errors"]:
            counts["errors"] += 1
            error = ET.SubElement(
                case,
                "error",
                message=f"{row['n_errors']} of {row['n_pairs']} pairs have no score "
                "(judge failures or pairs that could not be judged); a failure never counts "
                "as fair",
                type="judge_errors",
            )
            error.text = f"pairs: {row['n_pairs']}, scored: {row['n_scored']}"
    return counts


def _failure(case: ET.Element, check: dict[str, Any]) -> None:
    observed = _number(check["observed"])
    message = (
        f"observed {observed}, threshold {_comparison(str(check['gate']))} "
        f"{_number(check['threshold'])}"
    )
    if check.get("note"):
        message += f" ({check['note']})"
    failure = ET.SubElement(case, "failure", message=message, type=str(check["gate"]))
    failure.text = "\n".join(
        f"{key}: {_number(check.get(key))}" for key in check if key != "passed"
    )


def step_summary(outcomes: Sequence[Outcome], *, title: str) -> str:
    """The Markdown a GitHub Actions run page shows: the verdict of each outcome, its failed
    checks, and the summary table (passing checks folded away)."""
    passed = all(o.gates.passed for o in outcomes)
    errored = any(o.error is not None for o in outcomes)
    failed_any = any(o.gates.status == "fail" for o in outcomes if o.error is None)
    state = "ERROR" if errored else "PASS" if passed else "FAIL" if failed_any else "INCONCLUSIVE"
    lines = [f"### {_escape(title)}: {state}", ""]
    for outcome in outcomes:
        if outcome.error is not None:
            text = _escape(outcome.error).replace("\n", "  \n")  # Markdown line breaks
            lines += [f"#### {_escape(outcome.name)}: ERROR", "", text, ""]
            continue
        checks = outcome.gates.checks
        failed = checks.filter(~pl.col("passed"))
        state = outcome.gates.status.upper()  # PASS, FAIL or INCONCLUSIVE
        lines.append(
            f"#### {_escape(outcome.name)}: {state} ({checks.height - failed.height} of "
            f"{checks.height} gate checks passed)"
        )
        lines.append("")
        if outcome.about:
            lines.append(
                " · ".join(f"{_escape(k)}: {_escape(str(v))}" for k, v in outcome.about.items())
            )
            lines.append("")
        if not failed.is_empty():
            lines += [_checks_table(failed), ""]
        passing = checks.filter(pl.col("passed"))
        if not passing.is_empty():
            lines += [
                f"<details><summary>{passing.height} passing checks</summary>",
                "",
                _checks_table(passing),
                "",
                "</details>",
                "",
            ]
        if outcome.comparison is not None and not outcome.comparison.is_empty():
            lines += [
                "<details><summary>Since the baseline</summary>",
                "",
                _escape(unmatched_line(outcome.comparison)),
                "",
                markdown_table(readable_comparison(outcome.comparison), html_safe=True),
                "",
                "</details>",
                "",
            ]
        lines += [
            "<details><summary>Summary by slice</summary>",
            "",
            markdown_table(readable_summary(outcome.summary), html_safe=True),
            "",
            "</details>",
            "",
        ]
    return "\n".join(lines)


def _checks_table(checks: pl.DataFrame) -> str:
    rows = [
        {
            "result": "pass" if c["passed"] else "FAIL",
            "metric": c["metric"],
            "slice": c["slice"],
            "gate": c["gate"],
            "threshold": _number(c["threshold"]),
            "observed": _number(c["observed"]),
            "note": c["note"] or "",
        }
        for c in checks.iter_rows(named=True)
    ]
    table = pl.DataFrame(rows, schema=dict.fromkeys(rows[0], pl.String))
    return markdown_table(table, html_safe=True)


def _escape(text: str) -> str:
    """Text from the data as Markdown shows it literally: no HTML, and no image or link (a
    ``![px](http://...)`` in a slice name would make the run page fetch it)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_LINK.sub(lambda m: "\\" + m.group(), text)


_MARKDOWN_LINK = re.compile(r"[\[\]!]")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold, each written as ``\\xNN``."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
