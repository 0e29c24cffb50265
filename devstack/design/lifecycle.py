"""State diagrams of a lifecycle, laid out by Graphviz from its transition table.

A lifecycle is given as its transition table (status -> statuses it may move to), the moves that
explain each transition (action and initiator, the rows of the notebook's transition table) and
optional groups of statuses drawn as clusters. The states an inventory kind adds after CONFIRMED
(parking's CHECKED_IN, NO_SHOW, COMPLETED...) are read from what the kind declared
(`holdfast.domain.lifecycle.declare`) by `declared_lifecycles`: one diagram per kind, no code per kind.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import html

import graphviz

START = "∅"

#: One colour per initiator, chosen to stay apart for the common colour-vision deficiencies.
INITIATOR_COLOURS: dict[str, str] = {
    "customer": "#0072B2",
    "provider": "#D55E00",
    "timer": "#009E73",
    "reconciler": "#CC79A7",
    "operator": "#7B3294",
    "system": "#555555",
}
#: Colours for actors a kind names in its declared states (a gate, a device...), in order of first use.
MORE_COLOURS = ("#E69F00", "#56B4E9", "#999933", "#882255", "#117733")


def initiator_colour(name: str) -> str:
    """The colour of an initiator; an actor first named by a kind's declared states gets the next free one."""
    if name not in INITIATOR_COLOURS:
        extra = [c for c in MORE_COLOURS if c not in INITIATOR_COLOURS.values()]
        INITIATOR_COLOURS[name] = extra[0] if extra else "#555555"
    return INITIATOR_COLOURS[name]


@dataclass(frozen=True)
class Move:
    source: str
    target: str
    action: str
    initiator: str           # as the table says it: "provider / reconciler", "timer (sweeper as backup)"
    condition: str = ""
    stored: str = ""
    key: str = ""
    repeat: str = ""

    @property
    def initiators(self) -> tuple[str, ...]:
        return tuple(part.strip().split(" ")[0] for part in self.initiator.split("/"))

    def __post_init__(self) -> None:
        unknown = [name for name in self.initiators if name not in INITIATOR_COLOURS]
        if unknown:
            raise ValueError(f"unknown initiator {unknown} in {self.source} -> {self.target}")


@dataclass(frozen=True)
class Lifecycle:
    """What a kind adds after CONFIRMED, in the shape `state_diagram` draws."""

    kind: str
    transitions: dict[str, set[str]]
    moves: list[Move]
    groups: dict[str, list[str]]


def declared_lifecycles(declarations: Mapping[str, Iterable] | None = None) -> list[Lifecycle]:
    """One lifecycle per inventory kind that declared states (`holdfast.domain.lifecycle`): from
    CONFIRMED through the kind's states, each move labelled by who may make it and what happens to
    the places, the states grouped by whether the places stay sold or go back on sale."""
    if declarations is None:
        from holdfast import kinds  # noqa: F401 - the built-in kinds declare their states as they register
        from holdfast.domain import lifecycle as declared

        declarations = declared.declarations()
    found = []
    for kind, states in sorted(declarations.items()):
        states = list(states)
        transitions: dict[str, set[str]] = {"CONFIRMED": set()}
        moves = []
        for state in states:
            transitions.setdefault(state.status, set())
            for source in sorted(state.after):
                transitions.setdefault(source, set()).add(state.status)
                actors = sorted(state.actors)
                for actor in actors:
                    initiator_colour(actor)
                places = "places stay sold" if state.places == "sold" else "places back on sale"
                # what the move announces (its outbox event) names it better than the generic advance
                moves.append(Move(source, state.status, f"{state.notify or 'advance'} ({places})", " / ".join(actors)))
        sold = ["CONFIRMED"] + [s.status for s in states if s.places == "sold"]
        released = [s.status for s in states if s.places != "sold"]
        groups = {"SOLD": sold, **({"RELEASED": released} if released else {})}
        found.append(Lifecycle(kind, transitions, moves, groups))
    return found


def edges(transitions: Mapping) -> set[tuple[str, str]]:
    return {(str(source), str(target)) for source, targets in transitions.items() for target in targets}


def uncovered(transitions: Mapping, moves: Iterable[Move]) -> tuple[set, set]:
    """(transitions no move explains, moves that are not transitions); both empty when they agree."""
    explained = {(m.source, m.target) for m in moves if m.source != START}
    table = edges(transitions)
    return table - explained, explained - table


def _fold(text: str, width: int = 22) -> list[str]:
    # Long snake_case actions are broken after an underscore so labels do not widen the layout.
    lines, line = [], ""
    for word in text.replace(" (", "\n(").split("\n"):
        for piece in [p + "_" for p in word.split("_")[:-1]] + [word.split("_")[-1]]:
            if line and len(line) + len(piece) > width:
                lines.append(line)
                line = ""
            line += piece
        lines.append(line)
        line = ""
    return [ln.strip() for ln in lines if ln.strip()]


def _label(actions: list[str]) -> str:
    # One action per line; composite actions were written "a / b" in the table.
    parts: list[str] = []
    for action in actions:
        parts.extend(part for part in action.split(" / ") if part not in parts)
    return "\n".join(line for part in parts for line in _fold(part))


def _darker(colour: str, factor: float = 0.75) -> str:
    # A label's text in the edge's hue but darker: the lighter initiator colours (a gate's amber)
    # are fine as strokes and faint as 11px text on white.
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{int(c * factor):02x}" for c in (red, green, blue))


def state_diagram(transitions: Mapping, moves: Iterable[Move], title: str,
                  groups: Mapping[str, Iterable] | None = None,
                  group_colours: Mapping[str, str] | None = None,
                  ranks: Iterable[Iterable] = (), label_boxes: bool = False,
                  group_labels_at: str = "t") -> graphviz.Digraph:
    """The lifecycle as a Graphviz digraph: every transition once, labelled with its actions and
    drawn in the colours of its initiators (several initiators: parallel strokes), the groups as
    clusters, and a legend of the initiators that appear. `ranks`: statuses to put on one level,
    a hint to the layout only. `label_boxes`: each edge label on a white box, so it stays readable
    where the layout puts it across a cluster's border or another edge. `group_labels_at`: "b" puts
    the clusters' names at their bottom, clear of the edges that come in from above."""
    moves = list(moves)
    missing, extra = uncovered(transitions, moves)
    if missing or extra:
        raise ValueError(f"moves and transitions differ: unexplained {sorted(missing)}, "
                         f"not allowed {sorted(extra)}")
    by_edge: dict[tuple[str, str], list[Move]] = {}
    for m in moves:
        by_edge.setdefault((m.source, m.target), []).append(m)

    graph = graphviz.Digraph(name=title)
    graph.attr(label=title, labelloc="t", fontsize="16", fontname="Helvetica", rankdir="TB",
               nodesep="0.3", ranksep="0.9", newrank="true", splines="spline", pad="0.2")
    graph.attr("node", shape="box", style="rounded,filled", fontname="Helvetica", fontsize="12",
               fillcolor="white", margin="0.15,0.08")
    graph.attr("edge", fontname="Helvetica", fontsize="11", arrowsize="0.7", penwidth="1.4")

    grouped: set[str] = set()
    for name, members in (groups or {}).items():
        members = sorted(str(m) for m in members)
        fill = (group_colours or {}).get(name, "#f2f2f2")
        with graph.subgraph(name=f"cluster_{name}") as cluster:
            cluster.attr(label=name, style="rounded,filled", fillcolor=fill, color="#999999", fontsize="13",
                         fontname="Helvetica-Bold", labelloc=group_labels_at)
            for member in members:
                cluster.node(member)
                grouped.add(member)
    for status in transitions:
        if str(status) not in grouped:
            graph.node(str(status))
    if any(source == START for source, _ in by_edge):
        graph.node(START, shape="circle", style="filled", fillcolor="black", label="", width="0.18")

    used: set[str] = set()
    for (source, target), explained in sorted(by_edge.items()):
        initiators = list(dict.fromkeys(i for m in explained for i in m.initiators))
        used.update(initiators)
        colours = [INITIATOR_COLOURS[i] for i in initiators]
        # Several initiators: the edge is split into equal segments, one per initiator.
        share = f"{1 / len(colours):.3f}"
        colour = colours[0] if len(colours) == 1 else ":".join(f"{c};{share}" for c in colours)
        text = _label([m.action for m in explained])
        if label_boxes:
            lines = "<BR/>".join(html.escape(line) for line in text.split("\n"))
            text = (f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2" BGCOLOR="white">'
                    f'<TR><TD><FONT COLOR="{_darker(colours[0])}">{lines}</FONT></TD></TR></TABLE>>')
        graph.edge(source, target, label=text, color=colour, fontcolor=colours[0])

    for rank in ranks or ():
        with graph.subgraph() as same:
            same.attr(rank="same")
            for status in rank:
                same.node(str(status))
    names = [name for name in INITIATOR_COLOURS if name in used]
    cells = "".join(f'<TD><FONT COLOR="{INITIATOR_COLOURS[n]}">&#9632;</FONT> '
                    f'<FONT COLOR="{_darker(INITIATOR_COLOURS[n])}">{n}</FONT></TD>' for n in names)
    graph.node("legend", shape="plaintext", style="", fontsize="11",
               label=f'<<TABLE BORDER="0" CELLSPACING="6"><TR><TD>edge colour = initiator; a multi-coloured '
                     f'edge: any of them</TD></TR><TR><TD><TABLE BORDER="0" CELLSPACING="8"><TR>{cells}</TR>'
                     f'</TABLE></TD></TR></TABLE>>')
    return graph
