"""A metric template cannot allocate much, at render or at compile time (issue 30, items 17 and
18): each hostile template below is run in a child process capped at 1 GiB of address space,
and fails with a named TemplateError in well under a second; legitimate uses of the bounded
filters (truncate, wordwrap) keep working."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import pairwise_polars as pp

HOSTILE = {
    "ljust": "{{ output_a.ljust(999999999) }}",
    "zfill": "{{ 'x'.zfill(999999999) }}",
    "expandtabs": "{{ ('\\t' * 1000).expandtabs(999999) }}",
    "format method": "{{ '{:>999999999}'.format(1) }}",
    "nested format": "{{ '{:>{w}}'.format(1, w=999999999) }}",
    "percent": "{{ '%0999999999d' % 1 }}",
    "format filter": "{{ '%0999999999d'|format(1) }}",
    "indent": "{{ ('x\\n' * 100000)|indent(999999) }}",
    "concat doubling": "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}"
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
    "plus doubling": "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}"
    "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
    "replace": "{{ ('x' * 100000).replace('x', 'x' * 1000) }}",
    "lipsum": "{{ lipsum(n=2000000) }}",
    "output": "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
    "macro default": "{% macro m(x='%0999999999d' % 1) %}{{ x }}{% endmacro %}{{ m() }}",
}

CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
import pairwise_polars as pp
from pairwise_polars._errors import TemplateError
out = {}
for name, user in json.loads(sys.argv[1]).items():
    metric = pp.Metric(name=name, kind="pairwise", version="1", max_score=2, labels={},
                       system="Compare.", user=user, source="test")
    values = dict.fromkeys(pp.metrics.PAIR_VARIABLES, "text")
    try:
        metric.render(values)
        out[name] = "rendered"
    except TemplateError as exc:
        out[name] = str(exc)
print(json.dumps(out))
"""


def test_hostile_templates_fail_named_within_a_memory_cap() -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(HOSTILE)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert child.returncode == 0, child.stderr[-2000:]
    results = json.loads(child.stdout)
    for name, message in results.items():
        head = f"Metric {name!r} (test) failed to "
        assert message.startswith((f"{head}render: ", f"{head}compile: ")), message
        assert "exceeds the limit" in message or "exceeds the template limit" in message, message


@pytest.mark.parametrize(
    ("user", "expected"),
    [
        ("{{ output_a|truncate(9, end='...') }}", "Dear..."),
        ("{{ output_a|wordwrap(10) }}", "Dear Alex,\nyour offer\nstands."),
        ("{{ 'a' }}{{ output_b|indent(2, first=true) }}", "a  No."),
        ("{{ [output_a, output_b]|join(' | ') }}", "Dear Alex, your offer stands. | No."),
        ("{{ '%-5s|' % 'ab' }}{{ '{:>4}'.format(7) }}", "ab   |   7"),
    ],
)
def test_bounded_filters_still_work_in_custom_metrics(
    tmp_path: Path, user: str, expected: str
) -> None:
    path = tmp_path / "metric.yaml"
    spec = {"name": "custom", "kind": "pairwise", "version": "1", "rubric": {"max": 2},
            "system": "Compare.", "user": user}  # fmt: skip
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    metric = pp.load_metric(path)
    values = dict.fromkeys(pp.metrics.PAIR_VARIABLES, "x")
    values |= {"output_a": "Dear Alex, your offer stands.", "output_b": "No."}
    messages = json.loads(metric.render(values))
    assert messages[1]["content"] == expected
