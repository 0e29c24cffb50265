"""A trace drawn as a sequence diagram: one lane per participant, time down the page, every
request, notification and journal entry an arrow with what was decided written on it.

Hand-built SVG (no scripts, no fonts or files fetched), so the same markup shows in the notebook
and in the exported HTML.
"""
from __future__ import annotations

import html
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass

LANES = ("customer", "API", "booking record", "queue / consumer", "timer", "reconciler", "provider")
#: A lane only parking's traces use (its gate's passes), placed right of the customer.
OPTIONAL_LANES = {"gate": 1}

#: Journal actors and the lane whose code wrote the entry.
JOURNAL_LANE = {"customer": "API", "system": "API", "operator": "API", "waitlist": "API", "gate": "API",
                "provider": "queue / consumer", "timer": "timer", "reconciler": "reconciler",
                "sweeper": "reconciler"}

#: The gate's amber (its colour in the lifecycle diagrams), darkened: the bold label is in it.
GATE_COLOUR = "#A86F00"

LANE_GAP, LEFT, TOP, LINE, PAD, CHAR = 150, 70, 46, 13, 9, 6.1


@dataclass(frozen=True)
class Arrow:
    at: float               # seconds since the trace started
    source: str             # lane
    target: str             # lane; the same lane: a note on it
    lines: tuple[str, ...]  # first line bold: what happened; the others: the decision
    colour: str = "#333333"
    dashed: bool = False


def arrows(rows: Iterable[dict], t0_seconds=lambda row: 0.0, several_bookings: bool = False) -> list[Arrow]:
    """Turn a trace's merged rows (notebook steps, journal entries, provider deliveries) into arrows."""
    drawn = []
    for row in rows:
        at = t0_seconds(row)
        if row["source"] == "journal":
            lane = JOURNAL_LANE.get(row["actor"], "API")
            change = (f"{row['before']} → {row['after']}" if row["before"] != row["after"]
                      else f"stays {row['after']}")
            who = f"[{row['booking']}] " if several_bookings else ""
            colour = "#7a4b00" if row["before"] != row["after"] else "#666666"
            text = (f"{who}{row['event']}: {change}", row.get("decision", ""))
            drawn.append(Arrow(at, lane, "booking record", text, colour))
        elif row["source"] == "delivery":
            delivered = "delivered" in row["journal"] and "undelivered" not in row["journal"]
            text = (f"webhook: {row['event']}", row["journal"])
            drawn.append(Arrow(at, "provider", "queue / consumer", text, "#D55E00", dashed=not delivered))
        elif row["actor"].startswith("gate"):
            drawn.append(Arrow(at, "gate", "API", (row["event"],), GATE_COLOUR))
        elif row["actor"].startswith("cust"):
            who = f"{row['actor']}: " if several_bookings else ""
            drawn.append(Arrow(at, "customer", "API", (who + row["event"],), "#0072B2"))
        elif row["actor"].startswith("provider"):
            if row["event"].startswith("customer"):
                drawn.append(Arrow(at, "customer", "provider", (row["event"],), "#0072B2", dashed=True))
            else:
                drawn.append(Arrow(at, "provider", "provider", (row["event"],), "#D55E00"))
        elif row["actor"] == "scheduler":
            drawn.append(Arrow(at, "reconciler", "reconciler", (row["event"],), "#CC79A7"))
        else:  # the notebook's own remarks (counts read, faults armed)
            drawn.append(Arrow(at, "customer", "customer", (f"notebook: {row['event']}",), "#555555"))
    return drawn


def _marker(colour: str) -> str:
    return "seq-head-" + colour.lstrip("#")


def lanes_of(drawn: list[Arrow]) -> tuple[str, ...]:
    """The lanes some arrow starts or ends on, in the usual order (the customer's always): a lane
    nobody used would only narrow the others, and the page scales a wide picture down."""
    used = {a.source for a in drawn} | {a.target for a in drawn} | {"customer"}
    lanes = list(LANES)
    for lane, index in sorted(OPTIONAL_LANES.items(), key=lambda item: item[1]):
        lanes.insert(index, lane)
    return tuple(lane for lane in lanes if lane in used)


def width_of(drawn: list[Arrow]) -> int:
    return LEFT + LANE_GAP * len(lanes_of(drawn)) + 10


def _x(lane: str, lanes: tuple[str, ...] = LANES) -> float:
    return LEFT + LANE_GAP * (lanes.index(lane) + 0.5)


def _wrap(lines: tuple[str, ...], width_px: float) -> list[tuple[str, bool]]:
    chars = max(18, int(width_px / CHAR))
    out = []
    for index, line in enumerate(lines):
        for part in textwrap.wrap(line, chars) or ([] if index else [""]):
            out.append((part, index == 0))
    return out


def svg(drawn: list[Arrow], title: str = "") -> str:
    lanes = lanes_of(drawn)
    width = width_of(drawn)
    body: list[str] = []
    y = TOP + 18
    for arrow in drawn:
        x1, x2 = _x(arrow.source, lanes), _x(arrow.target, lanes)
        span = abs(x2 - x1)
        text_width = max(span, 2 * LANE_GAP) if span else 1.6 * LANE_GAP
        lines = _wrap(arrow.lines, text_width)
        centre = (x1 + x2) / 2 if span else x1 + 8 + text_width / 2
        centre = min(max(centre, LEFT + text_width / 2), width - text_width / 2 - 4)
        for index, (text, bold) in enumerate(lines):
            weight = "bold" if bold else "normal"
            fill = arrow.colour if bold else "#444444"
            body.append(f'<text x="{centre:.0f}" y="{y + LINE * index:.0f}" text-anchor="middle" '
                        f'font-weight="{weight}" fill="{fill}" class="halo">{html.escape(text)}</text>')
        y_arrow = y + LINE * len(lines) - 6
        body.append(f'<text x="6" y="{y_arrow + 4:.0f}" fill="#666666">+{arrow.at:.2f} s</text>')
        dash = ' stroke-dasharray="5,3"' if arrow.dashed else ""
        if span:
            body.append(f'<line x1="{x1:.0f}" y1="{y_arrow:.0f}" x2="{x2:.0f}" y2="{y_arrow:.0f}" '
                        f'stroke="{arrow.colour}" stroke-width="1.6"{dash} '
                        f'marker-end="url(#{_marker(arrow.colour)})"/>')
        else:
            body.append(f'<circle cx="{x1:.0f}" cy="{y_arrow:.0f}" r="4" fill="{arrow.colour}"/>')
        y = y_arrow + PAD + LINE
    height = y + 6
    head = []
    for lane in lanes:
        x = _x(lane, lanes)
        head.append(f'<line x1="{x:.0f}" y1="{TOP}" x2="{x:.0f}" y2="{height - 4}" stroke="#c8c8c8" '
                    f'stroke-width="1"/>')
        head.append(f'<rect x="{x - LANE_GAP / 2 + 6:.0f}" y="{TOP - 24}" width="{LANE_GAP - 12}" '
                    f'height="22" '
                    f'rx="4" fill="#eef1f6" stroke="#9aa5b8"/>')
        head.append(f'<text x="{x:.0f}" y="{TOP - 9}" text-anchor="middle" font-weight="bold">'
                    f'{html.escape(lane)}</text>')
    markers = "".join(
        f'<marker id="{_marker(c)}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>'
        for c in sorted({a.colour for a in drawn}))
    caption = (f'<text x="6" y="14" font-weight="bold" font-size="13">{html.escape(title)}</text>'
               if title else "")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica, Arial, sans-serif" '
            'font-size="11" '
            f'style="max-width:100%;height:auto">'
            f'<defs>{markers}'
            '<style>.halo{paint-order:stroke;stroke:#ffffff;stroke-width:3px;stroke-linejoin:round}</style>'
            f'</defs>{caption}{"".join(head)}{"".join(body)}</svg>')
