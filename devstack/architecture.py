"""`make architecture`: draws docs/architecture.svg, the deployed code's layers, from its imports.

The picture is the import graph of `layers/holdfast/holdfast` and `functions/` (read by grimp, the
library import-linter runs on) folded onto the layers that docs/architecture.md names: one box per
group of modules, one arrow per pair of boxes, labelled with how many module-to-module imports it
stands for. Rows run top down; an import may point down or sideways within its row, never up: an
upward one is drawn red and the command exits 1, so the picture cannot show a house that holds only
on paper.

Every module must belong to exactly one box: a new top-level module of holdfast stops the drawing
until it is given a place below (`BOXES`). The graph's facts (which modules each box holds, every
arrow and its count) are written into the SVG as a comment, and tests/docs/test_architecture_picture.py
compares them with the code, so a module moved between layers without redrawing fails the suite.
"""
from __future__ import annotations

import argparse
import functools
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[1]
SVG = REPO / "docs" / "architecture.svg"
PACKAGES = ("holdfast", "functions")
#: the embedded facts sit between these lines of the SVG's leading comment
BEGIN, END = "holdfast-architecture-begin", "holdfast-architecture-end"


@dataclass(frozen=True)
class Box:
    name: str
    row: int
    caption: str
    #: module names or package prefixes (a prefix holds the package and everything under it)
    holds: tuple[str, ...]


# Rows, top down. A box beside another in its row may import it; nothing imports a row above its own.
BOXES = (
    Box("functions", 0, "functions/<name>/app.py:\none thin handler per Lambda", ("functions",)),
    Box("tools", 0, "holdfast.tools: the operators'\ntools on the table", ("holdfast.tools",)),
    # The products: each package holds its kinds, schemas, services, storage and wiring, uses the
    # core below and never another product; the core finds them through the registry only.
    Box("events", 1, "product: event places\n(general admission, seat maps)", ("holdfast.products.events",)),
    Box("appointments", 1, "product: appointment slots\nof resources", ("holdfast.products.appointments",)),
    Box("parking", 1, "product: parking spaces,\ngates, passes, exit payments", ("holdfast.products.parking",)),
    Box("orders", 1, "product: orders, several\nofferings' lines as one", ("holdfast.products.orders",)),
    Box("entry", 2, "holdfast.entry, what the handlers\nshare: routing, errors, SQS batches", ("holdfast.entry",)),
    Box("wiring", 2, "builds the core's services;\nthe only place that picks adapters", ("holdfast.wiring",)),
    Box("adapters", 2, "DynamoDB, YooKassa, Step Functions,\nSQS: implement the ports",
        ("holdfast.adapters",)),
    Box("services", 3, "the core's use cases: hold, pay,\nexpire, reconcile, refund, cancel", ("holdfast.services",)),
    Box("kinds", 4, "the kind interface and the\nregistry of kinds and products", ("holdfast.kinds",)),
    Box("models", 4, "pydantic models of the\ncore's API bodies", ("holdfast.schemas",)),
    Box("ports", 5, "narrow Protocols and\nthe outcomes; typing only", ("holdfast.ports",)),
    Box("domain", 5, "pure rules, values\nand commands; no I/O", ("holdfast.domain",)),
    Box("shared", 6, "leaves every layer may use", (
        "holdfast.clock", "holdfast.config", "holdfast.faults", "holdfast.observability")),
)
#: packages that are only directories or hold no code of their own: in no box, and they must import nothing
ROOTS = ("holdfast", "functions", "holdfast.products")
#: boxes whose incoming arrows are drawn faint (imported by almost everyone)
FAINT = ("shared",)
#: a box with more modules than this shows their count instead of their names
LISTED = 8


class Unplaced(Exception):
    """A module that no box holds."""


def box_of(module: str, boxes: tuple[Box, ...] | None = None) -> Box:
    boxes = boxes or BOXES
    matches = [box for box in boxes for held in box.holds if module == held or module.startswith(held + ".")]
    if not matches:
        raise Unplaced(f"{module} is in no layer: give it a place in devstack/architecture.py BOXES")
    if len(matches) > 1:
        raise Unplaced(f"{module} is in more than one box: {[box.name for box in matches]}")
    return matches[0]


@dataclass(frozen=True)
class House:
    """The import graph folded onto the boxes."""
    members: dict[str, tuple[str, ...]]   # box name -> the modules it holds, sorted
    arrows: dict[tuple[str, str], int]   # (importer box, imported box) -> module-to-module imports
    upward: tuple[tuple[str, str], ...]   # (importer module, imported module) that point up a row

    def facts(self) -> str:
        """The stable text form the SVG carries and the test compares: no layout, no version."""
        lines = [f"box {name}: {', '.join(modules)}" for name, modules in sorted(self.members.items())]
        lines += [f"arrow {a} > {b}: {n}" for (a, b), n in sorted(self.arrows.items())]
        return "\n".join(lines)


def _is_namespace_dir(module: str) -> bool:
    """functions/ and functions/<name>/ are directories without code; only their app.py counts."""
    return module.startswith("functions") and not module.endswith(".app")


@functools.cache
def import_graph() -> grimp.ImportGraph:
    for path in (str(REPO / "layers" / "holdfast"), str(REPO)):
        if path not in sys.path:
            sys.path.insert(0, path)
    return grimp.build_graph(*PACKAGES, include_external_packages=False, cache_dir=None)


def read_house(boxes: tuple[Box, ...] | None = None) -> House:
    boxes = boxes or BOXES
    graph = import_graph()
    members: dict[str, list[str]] = {box.name: [] for box in boxes}
    arrows: Counter[tuple[str, str]] = Counter()
    upward = []
    for module in sorted(graph.modules):
        imported = graph.find_modules_directly_imported_by(module)
        if module in ROOTS or _is_namespace_dir(module):
            if imported:
                raise Unplaced(f"{module} imports {sorted(imported)}: give it a place in BOXES")
            continue
        source = box_of(module, boxes)
        members[source.name].append(module)
        for target_module in imported:
            target = box_of(target_module, boxes)
            if target is source:
                continue
            arrows[source.name, target.name] += 1
            if target.row < source.row:
                upward.append((module, target_module))
    return House({name: tuple(sorted(mods)) for name, mods in members.items()}, dict(arrows),
                 tuple(sorted(upward)))


def _name(module: str) -> str:
    """How a box lists a module: a handler by its folder, anything else by its last name."""
    parts = module.split(".")
    return parts[1] if parts[0] == "functions" else parts[-1]


def _label(box: Box, modules: tuple[str, ...]) -> str:
    # a package's __init__ is counted in the facts and the arrows, not in the box's list
    shown = sorted(_name(m) for m in modules if m not in box.holds or len(box.holds) > 1)
    if not shown:
        body = " ".join(f"{m.replace('.', '/')}.py" for m in modules)
    elif len(shown) > LISTED:
        body = f"{len(shown)} modules"
    else:
        body = "<BR/>".join(_wrap(shown))
    return (f'<<FONT POINT-SIZE="16"><B>{box.name}</B></FONT><BR/>'
            f'<FONT POINT-SIZE="11">{"<BR/>".join(map(_escape, box.caption.splitlines()))}</FONT><BR/>'
            f'<FONT POINT-SIZE="12" COLOR="#333333">{body}</FONT>>')


def _wrap(names: list[str], width: int = 34) -> list[str]:
    lines: list[str] = []
    for name in names:
        if lines and len(lines[-1]) + len(name) + 2 <= width:
            lines[-1] += f", {name}"
        else:
            lines.append(name)
    return lines


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def draw(house: House):
    import graphviz

    rows = sorted({box.row for box in BOXES})
    dot = graphviz.Digraph(
        "holdfast",
        graph_attr={"comment": f"{BEGIN}\n{house.facts()}\n{END}", "rankdir": "TB", "nodesep": "0.35", "ranksep": "0.9", "fontname": "Helvetica",
                    "label": "Holdfast's layers from the imports (make architecture): an arrow counts "
                             "the module-to-module imports between two boxes",
                    "labelloc": "t", "fontsize": "16"},
        node_attr={"shape": "box", "style": "rounded,filled", "fontname": "Helvetica", "margin": "0.18,0.1"},
        edge_attr={"fontname": "Helvetica", "fontsize": "12", "color": "#555555", "arrowsize": "0.7"})
    fill = {0: "#e8f0fe", 1: "#fef7e0", 2: "#e6f4ea", 3: "#f3e8fd", 4: "#fce8e6", 5: "#f1f3f4"}
    for row in rows:
        with dot.subgraph(name=f"row{row}") as same:
            same.attr(rank="same")
            for box in (b for b in BOXES if b.row == row):
                same.node(box.name, _label(box, house.members[box.name]), fillcolor=fill.get(row, "white"))
    # keep the rows in order even where no import joins two of them
    for upper, lower in zip(rows, rows[1:]):
        first = lambda r: next(b.name for b in BOXES if b.row == r)  # noqa: E731
        dot.edge(first(upper), first(lower), style="invis", weight="10")
    rank = {box.name: box.row for box in BOXES}
    for (source, target), count in sorted(house.arrows.items()):
        up, sideways = rank[target] < rank[source], rank[target] == rank[source]
        # the leaves are imported from everywhere: drawn faint, so the layers' own arrows stand out
        faint = target in FAINT and not up
        colour = "#d93025" if up else "#bbbbbb" if faint else "#444444"
        dot.edge(source, target, label=f" {count}", penwidth=str(1 + min(count, 90) / 25),
                 color=colour, fontcolor="#d93025" if up else "#999999" if faint else "black",
                 fontsize="10" if faint else "12",
                 constraint="false" if (up or sideways) else "true")
    return dot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=SVG)
    args = parser.parse_args(argv)
    house = read_house()
    args.output.write_bytes(draw(house).pipe(format="svg"))
    print(f"wrote {args.output.relative_to(REPO) if args.output.is_relative_to(REPO) else args.output}: "
          f"{sum(map(len, house.members.values()))} modules in {len(BOXES)} boxes, "
          f"{len(house.arrows)} arrows")
    for importer, imported in house.upward:
        print(f"upward import: {importer} imports {imported}", file=sys.stderr)
    return 1 if house.upward else 0


if __name__ == "__main__":
    sys.exit(main())
