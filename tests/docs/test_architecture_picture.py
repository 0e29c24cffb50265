"""docs/architecture.svg shows the layers the code has today, and no layer imports one above it.

The SVG carries the facts it was drawn from (devstack/architecture.py writes them into its leading
comment); the layout and Graphviz's version are not compared, only which modules each box holds and
how many imports each arrow stands for, read again from the code here.
"""
from __future__ import annotations

import dataclasses
import difflib
import html
import re

import pytest

from devstack import architecture
from devstack.architecture import BEGIN, BOXES, END, SVG, Unplaced, read_house


def drawn_facts() -> str:
    text = html.unescape(SVG.read_text(encoding="utf-8"))
    found = re.search(rf"{BEGIN}\n(.*?)\n{END}", text, re.S)
    assert found, f"{SVG.name} carries no facts: redraw it with `make architecture`"
    return found.group(1)


def test_the_committed_picture_is_drawn_from_the_code_as_it_is():
    drawn, now = drawn_facts(), read_house().facts()
    changed = "\n".join(difflib.unified_diff(drawn.splitlines(), now.splitlines(), "drawn", "code", lineterm=""))
    assert drawn == now, f"docs/architecture.svg is stale: run `make architecture` and commit it\n{changed}"


def test_no_layer_imports_a_layer_above_it():
    assert read_house().upward == ()


def test_moving_a_module_to_another_layer_changes_what_the_picture_must_show():
    # the fault points drawn with the services instead of the shared leaves: the facts differ
    moved = tuple(
        dataclasses.replace(box, holds=tuple(h for h in box.holds if h != "holdfast.faults"))
        if box.name == "shared" else
        dataclasses.replace(box, holds=box.holds + ("holdfast.faults",)) if box.name == "services"
        else box
        for box in BOXES)
    assert read_house(moved).facts() != drawn_facts()


def test_a_leaf_placed_above_its_importers_is_an_upward_import():
    raised = tuple(dataclasses.replace(box, row=-1) if box.name == "shared" else box for box in BOXES)
    upward = read_house(raised).upward
    assert ("holdfast.domain.booking", "holdfast.clock") in upward
    assert {imported for _, imported in upward} <= set(next(b for b in BOXES if b.name == "shared").holds)


def test_a_module_in_no_box_stops_the_drawing():
    without_ports = tuple(box for box in BOXES if box.name != "ports")
    with pytest.raises(Unplaced, match="holdfast.ports is in no layer"):
        read_house(without_ports)


def test_the_command_fails_on_an_upward_import(tmp_path, monkeypatch):
    monkeypatch.setattr(architecture, "BOXES", tuple(
        dataclasses.replace(box, row=-1) if box.name == "shared" else box for box in BOXES))
    assert architecture.main(["--output", str(tmp_path / "house.svg")]) == 1
    assert 'stroke="#d93025"' in (tmp_path / "house.svg").read_text(encoding="utf-8")
