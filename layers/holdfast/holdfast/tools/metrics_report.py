"""The sale's business metrics as the functions emitted them: the EMF lines in the functions' log
groups (``/aws/lambda/<stack>-...``), summed by metric name.

The same reader serves AWS (CloudWatch Logs) and the local stack (which writes each invocation's
EMF lines into its emulator's CloudWatch Logs, under the same group names): only the endpoint
differs. ``python -m holdfast.tools.cli metrics`` prints it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..observability import NAMESPACE

#: CloudWatch Logs filters on it server-side; an emulator that does not understand it returns
#: everything, and the parser below keeps only our namespace either way.
FILTER = '{ $._aws.CloudWatchMetrics[0].Namespace = "%s" }'


@dataclass
class Summary:
    unit: str
    values: list[float] = field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(self.values)

    @property
    def maximum(self) -> float:
        return max(self.values) if self.values else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "samples": len(self.values), "sum": self.total, "max": self.maximum}


def records(lines: Iterable[str], namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    """The EMF records among log lines, of one namespace."""
    found = []
    for line in lines:
        text = line.strip()
        if not text.startswith("{") or '"_aws"' not in text:
            continue
        try:
            record = json.loads(text)
            directives = record["_aws"]["CloudWatchMetrics"]
        except (ValueError, KeyError, TypeError):
            continue
        if any(d.get("Namespace") == namespace for d in directives):
            found.append(record)
    return found


def summarise(emf_records: Iterable[dict[str, Any]], namespace: str = NAMESPACE) -> dict[str, Summary]:
    summaries: dict[str, Summary] = {}
    for record in emf_records:
        for directive in record["_aws"]["CloudWatchMetrics"]:
            if directive.get("Namespace") != namespace:
                continue
            for metric in directive.get("Metrics", []):
                name = metric["Name"]
                value = record.get(name)
                summary = summaries.setdefault(name, Summary(metric.get("Unit", "None")))
                summary.values.extend(float(v) for v in (value if isinstance(value, list) else [value])
                                      if isinstance(v, (int, float)))
    return summaries


def read_log_lines(client: Any, group_prefix: str, since_ms: int, namespace: str = NAMESPACE) -> list[str]:
    """Every message since ``since_ms`` in the log groups whose names start with ``group_prefix``."""
    lines: list[str] = []
    groups = []
    for page in client.get_paginator("describe_log_groups").paginate(logGroupNamePrefix=group_prefix):
        groups.extend(group["logGroupName"] for group in page.get("logGroups", []))
    for group in groups:
        pages = client.get_paginator("filter_log_events").paginate(
            logGroupName=group, startTime=since_ms, filterPattern=FILTER % namespace)
        for page in pages:
            lines.extend(event["message"] for event in page.get("events", []))
    return lines


def collect(client: Any, stack: str, since_ms: int, namespace: str = NAMESPACE) -> dict[str, Summary]:
    return summarise(records(read_log_lines(client, f"/aws/lambda/{stack}-", since_ms, namespace), namespace),
                     namespace)


def render(summaries: dict[str, Summary]) -> str:
    rows = [f"{'metric':<28} {'unit':<8} {'sum':>10} {'samples':>8} {'max':>10}"]
    for name in sorted(summaries):
        s = summaries[name]
        rows.append(f"{name:<28} {s.unit:<8} {s.total:>10g} {len(s.values):>8} {s.maximum:>10g}")
    return "\n".join(rows)
