"""The design notebook's helpers (devstack/design): the diagrams say what TRANSITIONS says, traces
become sequence diagrams, and the HTML page hides the plumbing."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from devstack.design import booking, lifecycle, sequence, traces
from holdfast.domain.statuses import HOLDING, RELEASED, SOLD, TRANSITIONS

ROOT = Path(__file__).resolve().parents[2]


def _laid_out(graph) -> dict:
    """What Graphviz made of the graph (its json output): the test reads the layout engine's view,
    not the DOT text."""
    return json.loads(graph.pipe(format="json"))


def _edges(graph) -> dict[tuple[str, str], dict]:
    laid = _laid_out(graph)
    names = {o["_gvid"]: o["name"] for o in laid["objects"]}
    return {(names[e["tail"]], names[e["head"]]): e for e in laid.get("edges", [])
            if not names[e["tail"]].startswith("legend")}


def _booking_diagram():
    return lifecycle.state_diagram(TRANSITIONS, booking.BOOKING_MOVES, "Booking statuses",
                                   groups={"HOLDING": HOLDING, "SOLD": SOLD, "RELEASED": RELEASED})


def test_every_transition_is_one_labelled_edge_in_its_initiators_colours():
    drawn = _edges(_booking_diagram())
    assert set(drawn) - {(lifecycle.START, "HELD")} == lifecycle.edges(TRANSITIONS)
    assert len(drawn) == len(lifecycle.edges(TRANSITIONS)) + 1, "one edge per transition"
    for (source, target), edge in drawn.items():
        label = edge.get("label", "").replace("\\n", "").replace("\n", "")
        explained = [m for m in booking.BOOKING_MOVES if (m.source, m.target) == (source, target)]
        for move in explained:
            assert move.action.split(" ")[0] in label, (source, target, label)
        for initiator in {i for m in explained for i in m.initiators}:
            assert lifecycle.INITIATOR_COLOURS[initiator] in edge["color"], (source, target, initiator)


def test_capacity_groups_are_clusters_holding_their_statuses():
    laid = _laid_out(_booking_diagram())
    names = {o["_gvid"]: o["name"] for o in laid["objects"]}
    clusters = {o["name"]: {names[n] for n in o.get("nodes", [])} for o in laid["objects"]
                if o["name"].startswith("cluster_")}
    for name, members in {"HOLDING": HOLDING, "SOLD": SOLD, "RELEASED": RELEASED}.items():
        assert clusters[f"cluster_{name}"] == {m.value for m in members}, name


def test_a_transition_nobody_explains_stops_the_drawing():
    widened = dict(TRANSITIONS) | {"NO_SHOW": frozenset()}
    widened["HELD"] = TRANSITIONS["HELD"] | {"NO_SHOW"}
    with pytest.raises(ValueError, match="NO_SHOW"):
        lifecycle.state_diagram(widened, booking.BOOKING_MOVES, "with an unexplained move")


def test_another_lifecycle_is_drawn_by_passing_its_own_table():
    parking = {"RESERVED": {"CHECKED_IN", "NO_SHOW"}, "CHECKED_IN": {"COMPLETED"}, "NO_SHOW": set(), "COMPLETED": set()}
    moves = [lifecycle.Move("RESERVED", "CHECKED_IN", "entered", "customer"),
             lifecycle.Move("RESERVED", "NO_SHOW", "no_show", "timer"),
             lifecycle.Move("CHECKED_IN", "COMPLETED", "paid_at_exit", "customer / provider")]
    drawn = _edges(lifecycle.state_diagram(parking, moves, "Parking"))
    assert set(drawn) == lifecycle.edges(parking)
    assert drawn[("RESERVED", "CHECKED_IN")]["label"] == "entered"


def test_an_initiator_without_a_colour_is_refused():
    with pytest.raises(ValueError, match="unknown initiator"):
        lifecycle.Move("HELD", "EXPIRED", "hold_expired", "cron")


def test_payment_lifecycles_are_explained_edge_for_edge():
    assert lifecycle.uncovered(booking.PROVIDER_PAYMENT, booking.PROVIDER_PAYMENT_MOVES) == (set(), set())
    assert lifecycle.uncovered(booking.OUR_ATTEMPT, booking.OUR_ATTEMPT_MOVES) == (set(), set())


ROWS = [
    {"at": "t0", "source": "step", "actor": "cust-1234", "event": "POST /events/…/bookings → 201 HELD"},
    {"at": "t1", "source": "journal", "actor": "customer", "event": "hold_created", "before": "∅", "after": "HELD",
     "decision": "1 place(s) held", "booking": "b1"},
    {"at": "t2", "source": "step", "actor": "provider (sandbox)", "event": "customer pays: succeeded"},
    {"at": "t3", "source": "delivery", "actor": "provider → webhook", "event": "payment.succeeded attempt 1",
     "journal": "delivery dropped"},
    {"at": "t4", "source": "journal", "actor": "reconciler", "event": "payment_succeeded", "before": "HELD",
     "after": "CONFIRMED", "decision": "paid while held", "booking": "b1"},
    {"at": "t5", "source": "journal", "actor": "timer", "event": "hold_expired", "before": "HELD",
     "after": "EXPIRED", "decision": "unpaid at the deadline", "booking": "b2"},
]


def test_a_trace_becomes_arrows_between_the_lanes_that_acted():
    drawn = sequence.arrows(ROWS, lambda row: float(row["at"][1:]))
    assert [(a.source, a.target) for a in drawn] == [
        ("customer", "API"), ("API", "booking record"), ("customer", "provider"),
        ("provider", "queue / consumer"), ("reconciler", "booking record"), ("timer", "booking record")]
    assert drawn[3].dashed, "an undelivered notification is drawn dashed"
    assert drawn[4].lines == ("payment_succeeded: HELD → CONFIRMED", "paid while held")
    assert [a.at for a in drawn] == [0, 1, 2, 3, 4, 5]


def test_the_sequence_svg_has_every_lane_and_every_decision():
    picture = sequence.svg(sequence.arrows(ROWS, lambda row: float(row["at"][1:])), title="t")
    for lane in sequence.LANES:
        assert f">{lane}</text>" in picture
    for text in ("hold_created: ∅ → HELD", "paid while held", "unpaid at the deadline", "delivery dropped"):
        assert text in picture
    assert "<script" not in picture and "http://" not in picture.replace("http://www.w3.org/2000/svg", "")


def test_tables_scroll_in_their_own_box_and_escape_their_cells():
    box = traces.table_html(["a"], [["<b>x</b>"]], caption="c")
    assert box.startswith("<div style='overflow-x:auto") and "&lt;b&gt;x&lt;/b&gt;" in box


def test_the_html_page_shows_outputs_and_only_the_invariant_checks_code():
    spec = importlib.util.spec_from_file_location("holdfast_design_notebook_html", ROOT / "docs" / "build_notebook.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    page = builder.render_html(builder.build())
    # The code is syntax-highlighted on the page, so identifiers are looked for, not whole lines.
    assert "wait_until" not in page and "sandbox_server" not in page and "booking_lifecycle" not in page
    assert "check_money" in page and "check_capacity" in page
    assert "overflow-x: auto" in page


def test_a_kind_that_declares_states_gets_its_own_lifecycle_diagram_without_code_of_its_own():
    from holdfast.domain import lifecycle as declared
    from tests.support import toy_kind

    toy_kind.register()
    drawn = {found.kind: found for found in lifecycle.declared_lifecycles()}
    toy = drawn["toy_zones"]
    assert {state.status for state in declared.declarations()["toy_zones"]} <= set(toy.transitions)
    diagram = lifecycle.state_diagram(toy.transitions, toy.moves, "toy", groups=toy.groups)
    edges = _edges(diagram)
    assert set(edges) == {("CONFIRMED", "ADMITTED"), ("ADMITTED", "LEFT"), ("CONFIRMED", "MISSED")}
    assert all(edge.get("label") for edge in edges.values())
    # An actor the engine does not know (the toy's gate) is drawn in a colour of its own.
    assert edges[("CONFIRMED", "ADMITTED")]["color"] == lifecycle.INITIATOR_COLOURS["gate"] \
        not in {lifecycle.INITIATOR_COLOURS[name] for name in ("customer", "provider", "timer", "operator")}
    assert toy.groups == {"SOLD": ["CONFIRMED", "ADMITTED", "LEFT"], "RELEASED": ["MISSED"]}
    # A kind's states appear by declaring them: a made-up kind is drawn the same way.
    made_up = lifecycle.declared_lifecycles({"parking": (
        declared.ExtraState("CHECKED_IN", frozenset({"CONFIRMED"}), frozenset({"gate"})),
        declared.ExtraState("COMPLETED", frozenset({"CHECKED_IN"}), frozenset({"gate"})),
        declared.ExtraState("NO_SHOW", frozenset({"CONFIRMED"}), frozenset({"timer"}), places="available"))})
    assert set(made_up[0].transitions) == {"CONFIRMED", "CHECKED_IN", "COMPLETED", "NO_SHOW"}


def test_the_parking_kind_draws_its_declared_lifecycle_named_by_what_each_move_announces():
    import holdfast.kinds  # noqa: F401 - registering the deployed kinds declares their states

    parking = {found.kind: found for found in lifecycle.declared_lifecycles()}["parking"]
    diagram = lifecycle.state_diagram(parking.transitions, parking.moves, "parking", groups=parking.groups,
                                      label_boxes=True)
    edges = _edges(diagram)
    moves = {("CONFIRMED", "CHECKED_IN"): ("vehicle.entered", "gate"),
             ("CHECKED_IN", "COMPLETED"): ("vehicle.exited", "gate"),
             ("CONFIRMED", "NO_SHOW"): ("booking.no_show", "timer"),
             ("CONFIRMED", "CANCELLED_NO_REFUND"): ("booking.cancelled", "customer")}   # a lot that keeps the money
    assert set(edges) == set(moves)
    for (source, target), (event, initiator) in moves.items():
        edge = edges[(source, target)]
        assert event in edge["label"] and 'BGCOLOR="white"' in edge["label"], edge["label"]
        assert edge["color"] == lifecycle.INITIATOR_COLOURS[initiator]
    laid = _laid_out(diagram)
    names = {o["_gvid"]: o["name"] for o in laid["objects"]}
    clusters = {o["name"]: {names[n] for n in o.get("nodes", [])} for o in laid["objects"]
                if o["name"].startswith("cluster_")}
    assert clusters == {"cluster_SOLD": {"CONFIRMED", "CHECKED_IN"}, "cluster_RELEASED": {"COMPLETED", "NO_SHOW", "CANCELLED_NO_REFUND"}}


GATE_ROWS = [
    {"at": "t0", "source": "step", "actor": "gate", "event": "POST /lots/…/gates/…/entry → 200 gate_open"},
    {"at": "t1", "source": "journal", "actor": "gate", "event": "vehicle_entered", "before": "CONFIRMED",
     "after": "CHECKED_IN", "decision": "entered through gate g1", "booking": "b1"},
]


def test_a_gate_pass_gets_a_lane_of_its_own_and_unused_lanes_are_left_out():
    drawn = sequence.arrows(GATE_ROWS, lambda row: float(row["at"][1:]))
    assert [(a.source, a.target) for a in drawn] == [("gate", "API"), ("API", "booking record")]
    assert sequence.lanes_of(drawn) == ("customer", "gate", "API", "booking record")
    picture = sequence.svg(drawn)
    assert ">gate</text>" in picture and ">reconciler</text>" not in picture
    assert f'width="{sequence.width_of(drawn)}"' in picture
    # the event traces, which have no gate, keep every lane they use and get no gate lane
    assert "gate" not in sequence.lanes_of(sequence.arrows(ROWS, lambda row: float(row["at"][1:])))


def test_the_parking_story_bills_the_same_hours_at_both_exits_whatever_minute_the_car_entered():
    """Section 3.10 enters at the wall clock and leaves by the gate's clock: its first exit owes the
    tariff less the prepaid hour, the customer pays exactly that, and the exit two minutes later
    must be granted. Every entry second of the half hour the story reserves from is tried (the
    flaky run entered 10-12 minutes past it: two hours owed at the first exit, three at the next)."""
    from datetime import datetime, timedelta, timezone
    from decimal import Decimal

    from holdfast.domain.money import Money
    from holdfast.products.parking import rules

    hourly, grace = Money(Decimal("100.00"), "RUB"), 10
    half = datetime(2026, 12, 3, 8, 30, tzinfo=timezone.utc)
    to = half + timedelta(minutes=60)
    for second in range(0, 30 * 60 + 1):
        entered = half + timedelta(seconds=second, milliseconds=second % 1000)
        first = traces.overstay_exit(entered, to)
        assert first >= to + timedelta(minutes=80)
        owed, paid_exit = (rules.tariff(hourly, None, rules.stay_minutes(entered, exit_at, grace))
                           for exit_at in (first, first + timedelta(minutes=2)))
        assert owed == paid_exit, (entered, owed, paid_exit)
