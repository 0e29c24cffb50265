"""Parking end to end over HTTP on the local stack: a lot's tariff as amounts (as docs/openapi.yaml
has it; a bare daily cap refused), the fallback table (every vehicle type with and without a permit), overlapping and touching windows, a burst of 50 reservations for 10 spaces,
a reservation paid on the sandbox and driven through a gate (entry and exit, each repeated; its
closed ticket shown again opens nothing), a
drive-up car that pays at the exit (the notification recorded on its ticket by the payment-events
function, so the exit asks the provider nothing), and a reservation nobody used becoming NO_SHOW by the timer
(refunded on a lot whose policy says so; a cancellation its policy does not refund).
(The stack runs one Lambda invocation at a time: the burst's races are tests/correctness's.)"""
from __future__ import annotations

import concurrent.futures as futures
import uuid
from collections import Counter
from datetime import timedelta

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.contract.test_openapi_contract import openapi
from holdfast.clock import iso, parse_iso, system_clock
from tests.support.flows import customer
from tests.support.stack_time import ROOM_SECONDS, current_half_hour, days_ahead, window_from_now

pytestmark = pytest.mark.integration

#: Four days in a row, months ahead on the stack's clock when the module is read, for windows that
#: must lie in the future (fixed dates would one day be past).
DAYS = {n: days_ahead(199 + n) for n in range(1, 5)}

TYPES = [{"space_id": "C1", "type": "COMPACT"}, {"space_id": "R1", "type": "REGULAR"},
         {"space_id": "L1", "type": "LARGE"}, {"space_id": "H1", "type": "HANDICAP"}]
FALLBACK = {("COMPACT", False): ["COMPACT", "REGULAR", "LARGE"], ("REGULAR", False): ["REGULAR", "LARGE"],
            ("LARGE", False): ["LARGE"], ("COMPACT", True): ["HANDICAP", "COMPACT", "REGULAR", "LARGE"],
            ("REGULAR", True): ["HANDICAP", "REGULAR", "LARGE"], ("LARGE", True): ["HANDICAP", "LARGE"]}


def create_lot(api, spaces=TYPES, **overrides):
    body = {"name": "Lot", "spaces": spaces, "tariff": {"hourly": {"value": "100.00", "currency": "RUB"},
                                                       "daily_cap": {"value": "900.00", "currency": "RUB"},
                                                       "grace_minutes": 10}, **overrides}
    answer = api.request("POST", "/lots", organizer=True, json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()


def reserve(api, lot_id, vehicle, start, end, permit=False, who=None, plate="A123BC77"):
    body = {"vehicle_type": vehicle, "plate": plate, "from": start, "to": end, "handicap_permit": permit}
    return api.request("POST", f"/lots/{lot_id}/reservations", customer=who or customer(), key=str(uuid.uuid4()),
                       json=body)


def gate(api, lot_id):
    answer = api.request("POST", f"/lots/{lot_id}/gates", organizer=True, json={"name": "Main"})
    assert answer.status_code == 201, answer.text
    return answer.json()


def pass_(api, lot_id, gate_, direction, **body):
    answer = api.request("POST", f"/lots/{lot_id}/gates/{gate_['gate_id']}/{direction}",
                         headers={"X-Gate-Key": gate_["gate_key"]}, json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def lot_view(api, lot_id):
    return api.request("GET", f"/lots/{lot_id}").json()


# How far ahead of the payments the no-show timers fall due in the timer test (a busy CI machine
# pays three bookings in a few seconds; the test moves the stack's clock past the margin).
NO_SHOW_MARGIN_SECONDS = 600
#: Past a timer's moment: the sweeper's one-second grace and one interval of the stack's scheduled
#: sweeper (a minute, the timer's only clock).
SWEEP_STEP_SECONDS = 62


def now_window(hours=2):
    """From the current half hour on the stack's clock, with minutes to spare before the next one
    turns (tests/support/stack_time.py): a window computed before setup must not have begun a half
    hour back by the time it is booked."""
    return window_from_now(hours)


def paid(api, sandbox, booking, who):
    payment = api.pay(booking["booking_id"], who)
    assert payment.status_code == 201, payment.text
    sandbox.pay(payment.json()["payment_id"])
    return api.wait_status(booking["booking_id"], who, "CONFIRMED")


def test_the_fallback_table_every_vehicle_type_with_and_without_a_permit(api):
    lot = create_lot(api)
    for hour, ((vehicle, permit), order) in enumerate(FALLBACK.items()):
        window = (f"{DAYS[1]}T{hour:02d}:00:00Z", f"{DAYS[1]}T{hour:02d}:30:00Z")
        got = []
        for _ in order:
            answer = reserve(api, lot["lot_id"], vehicle, *window, permit=permit)
            assert answer.status_code == 201, (vehicle, permit, answer.text)
            got.append(answer.json()["space_type"])
        assert got == order, (vehicle, permit)
        refused = reserve(api, lot["lot_id"], vehicle, *window, permit=permit)
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "no_space_available"
        assert refused.json()["error"]["details"]["tried"] == order


def documented(body, schema):
    """Check an answer against its schema in docs/openapi.yaml (OpenAPI 3.1 schemas are JSON Schema 2020-12)."""
    registry = Registry().with_resource("urn:openapi", Resource(contents=openapi(), specification=DRAFT202012))
    Draft202012Validator({"$ref": f"urn:openapi#/components/schemas/{schema}"}, registry=registry).validate(body)


def test_a_lots_tariff_amounts_are_value_and_currency_and_a_bare_cap_is_refused(api):
    lot = create_lot(api)
    shown = lot_view(api, lot["lot_id"])
    assert lot["tariff"] == shown["tariff"] == {"hourly": {"value": "100.00", "currency": "RUB"},
                                                "daily_cap": {"value": "900.00", "currency": "RUB"},
                                                "grace_minutes": 10}
    documented(shown, "LotWithCounts")
    hourly = {"value": "100.00", "currency": "RUB"}
    bare = api.request("POST", "/lots", organizer=True, json={
        "name": "Lot", "spaces": TYPES, "tariff": {"hourly": hourly, "daily_cap": 900}})
    assert (bare.status_code, bare.json()["error"]["code"], bare.json()["error"]["details"]) == \
        (400, "money_object_required", {"field": "daily_cap"})
    mixed = api.request("POST", "/lots", organizer=True, json={
        "name": "Lot", "spaces": TYPES, "tariff": {"hourly": hourly, "daily_cap": {"value": "9.00", "currency": "EUR"}}})
    assert (mixed.status_code, mixed.json()["error"]["code"], mixed.json()["error"]["details"]) == \
        (400, "currency_mismatch", {"field": "daily_cap", "currency": "RUB"})


def test_overlapping_windows_exclude_each_other_and_touching_ones_do_not(api):
    lot = create_lot(api, spaces=[{"space_id": "L1", "type": "LARGE"}])
    first = reserve(api, lot["lot_id"], "LARGE", f"{DAYS[2]}T10:00:00Z", f"{DAYS[2]}T12:00:00Z")
    assert first.status_code == 201 and first.json()["amount"] == {"value": "200.00", "currency": "RUB"}
    assert reserve(api, lot["lot_id"], "LARGE", f"{DAYS[2]}T11:30:00Z", f"{DAYS[2]}T13:00:00Z").status_code == 409
    assert reserve(api, lot["lot_id"], "LARGE", f"{DAYS[2]}T09:00:00+03:00", f"{DAYS[2]}T13:00:00+03:00").status_code == 201
    assert reserve(api, lot["lot_id"], "LARGE", f"{DAYS[2]}T12:00:00Z", f"{DAYS[2]}T13:00:00Z").status_code == 201
    off = reserve(api, lot["lot_id"], "LARGE", f"{DAYS[2]}T14:10:30Z", f"{DAYS[2]}T15:00:00Z")
    assert off.status_code == 400 and off.json()["error"]["code"] == "window_not_on_minute"


def test_a_window_to_the_minute_is_billed_for_its_minutes_and_takes_every_granule_it_touches(api):
    lot = create_lot(api, spaces=[{"space_id": "L1", "type": "LARGE"}])
    held = reserve(api, lot["lot_id"], "LARGE", f"{DAYS[4]}T10:10:00Z", f"{DAYS[4]}T11:10:00Z")
    assert held.status_code == 201, held.text
    booking = held.json()
    # one started hour for 60 minutes, though the granules it claims (10:00-11:30) last 90
    assert booking["amount"] == {"value": "100.00", "currency": "RUB"}
    assert (booking["from"], booking["to"]) == (f"{DAYS[4]}T10:10:00.000Z", f"{DAYS[4]}T11:10:00.000Z")
    partly = reserve(api, lot["lot_id"], "LARGE", f"{DAYS[4]}T11:20:00Z", f"{DAYS[4]}T12:00:00Z")
    assert partly.status_code == 409 and partly.json()["error"]["code"] == "no_space_available"
    after = reserve(api, lot["lot_id"], "LARGE", f"{DAYS[4]}T11:30:00Z", f"{DAYS[4]}T12:05:00Z")
    assert after.status_code == 201 and after.json()["amount"] == {"value": "100.00", "currency": "RUB"}


def test_fifty_reservations_for_ten_mixed_spaces_give_each_space_once(api):
    spaces = ([{"space_id": f"C{n}", "type": "COMPACT"} for n in range(3)] + [{"space_id": f"R{n}", "type": "REGULAR"}
              for n in range(3)] + [{"space_id": f"L{n}", "type": "LARGE"} for n in range(2)]
              + [{"space_id": f"H{n}", "type": "HANDICAP"} for n in range(2)])
    lot = create_lot(api, spaces=spaces)
    asks = [(["COMPACT", "REGULAR", "LARGE"][n % 3], n % 5 == 0) for n in range(50)]
    with futures.ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(lambda ask: reserve(api, lot["lot_id"], ask[0], f"{DAYS[3]}T10:00:00Z",
                                                    f"{DAYS[3]}T12:00:00Z", permit=ask[1]), asks))
    statuses = Counter(answer.status_code for answer in answers)
    given = [answer.json()["space_id"] for answer in answers if answer.status_code == 201]
    assert statuses == {201: 10, 409: 40}, [a.text for a in answers if a.status_code not in (201, 409)]
    assert sorted(given) == sorted(space["space_id"] for space in spaces)
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 409} == {"no_space_available"}


def test_a_paid_reservation_enters_and_leaves_once_each_repeat_answered_alike(api, sandbox, system):
    lot = create_lot(api, spaces=[{"space_id": "R1", "type": "REGULAR"}, {"space_id": "R2", "type": "REGULAR"}])
    gate_, who = gate(api, lot["lot_id"]), customer()
    held = reserve(api, lot["lot_id"], "REGULAR", *now_window(), who=who).json()
    confirmed = paid(api, sandbox, held, who)
    token = confirmed["entry_token"]
    config = api.request("GET", f"/lots/{lot['lot_id']}/gates/{gate_['gate_id']}/config",
                         headers={"X-Gate-Key": gate_["gate_key"]}).json()
    assert config["kid"] == lot["public_key"]["kid"] and lot_view(api, lot["lot_id"])["counts"]["REGULAR"]["reserved"] == 1
    entered = pass_(api, lot["lot_id"], gate_, "entry", event_id="in-1", token=token)
    assert entered["gate_open"] is True and entered["space_id"] == held["space_id"]
    assert pass_(api, lot["lot_id"], gate_, "entry", event_id="in-1", token=token) == entered
    assert pass_(api, lot["lot_id"], gate_, "entry", event_id="in-2", token=token)["reason"] == "already_inside"
    assert api.booking(held["booking_id"], who)["status"] == "CHECKED_IN"
    assert lot_view(api, lot["lot_id"])["counts"]["REGULAR"]["occupied"] == 1
    left = pass_(api, lot["lot_id"], gate_, "exit", event_id="out-1", ticket_id=entered["ticket_id"])
    assert left["exit_granted"] is True   # a stay within the prepaid window and the grace minutes
    assert pass_(api, lot["lot_id"], gate_, "exit", event_id="out-1", ticket_id=entered["ticket_id"]) == left
    again = pass_(api, lot["lot_id"], gate_, "exit", event_id="out-2", ticket_id=entered["ticket_id"])
    assert again["exit_granted"] is False and again["reason"] == "ticket_closed"   # the ticket served its car
    done = api.booking(held["booking_id"], who)
    assert done["status"] == "COMPLETED" and done["journal"][-1]["action"] == "vehicle_exited"
    counts = lot_view(api, lot["lot_id"])["counts"]["REGULAR"]
    assert counts["occupied"] == 0 and counts["available"] == 2   # released once: R1 free, R2 untouched


def exit_payment_states(system, ticket_id):
    stack = system["stack"]
    items = stack.boto3_client("dynamodb").query(
        TableName=stack.resources["BookingsTable"], ConsistentRead=True,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :pay)",
        ExpressionAttributeValues={":pk": {"S": f"TICKET#{ticket_id}"}, ":pay": {"S": "EXITPAY#"}})["Items"]
    return [item["state"]["S"] for item in items]


def test_a_drive_up_car_gets_a_space_and_pays_what_it_owes_at_the_exit(api, sandbox, system):
    lot = create_lot(api, spaces=[{"space_id": "R1", "type": "REGULAR"}],
                     tariff={"hourly": {"value": "120.00", "currency": "RUB"}, "grace_minutes": 0})
    gate_ = gate(api, lot["lot_id"])
    entered = pass_(api, lot["lot_id"], gate_, "entry", event_id="d-in", plate="X 777 XX")
    assert entered["gate_open"] is True and entered["space_id"] == "R1"
    full = pass_(api, lot["lot_id"], gate_, "entry", event_id="d-in-2", plate="Y111YY")
    assert full["gate_open"] is False and full["reason"] == "lot_full"
    owed = pass_(api, lot["lot_id"], gate_, "exit", event_id="d-out", plate="X777XX")
    assert owed["exit_granted"] is False and owed["amount_due"] == {"value": "120.00", "currency": "RUB"}
    assert pass_(api, lot["lot_id"], gate_, "exit", event_id="d-out", plate="X777XX") == owed
    [payment] = sandbox.payments(ticket_id=entered["ticket_id"])
    assert payment["amount"]["value"] == "120.00" and owed["confirmation_url"]
    sandbox.pay(payment["id"])
    # the provider's notification goes through the webhook and the payment-events function, which
    # records the exit payment on its ticket (no "unknown booking")...
    system["stack"].wait_idle()
    assert exit_payment_states(system, entered["ticket_id"]) == ["paid"]
    # ...so the next exit needs no answer from the provider
    sandbox.add_fault("error_500_before", route="GET /v3/payments/{id}", times=3)
    granted = pass_(api, lot["lot_id"], gate_, "exit", event_id="d-out-2", ticket_id=entered["ticket_id"])
    assert granted["exit_granted"] is True and sandbox.faults()[0]["times_left"] == 3   # never hit
    assert len(sandbox.payments(ticket_id=entered["ticket_id"])) == 1
    assert pass_(api, lot["lot_id"], gate_, "entry", event_id="d-in-3", plate="Y111YY")["gate_open"] is True


def test_a_drive_up_pays_its_exit_on_the_page_the_gate_links_to_and_sees_the_receipt(api, sandbox, system):
    from urllib.parse import parse_qs, urlsplit

    lot = create_lot(api, spaces=[{"space_id": "R1", "type": "REGULAR"}], name="Exit page lot",
                     tariff={"hourly": {"value": "90.00", "currency": "RUB"}, "grace_minutes": 0})
    gate_ = gate(api, lot["lot_id"])
    entered = pass_(api, lot["lot_id"], gate_, "entry", event_id="p-in", plate="E 555 EE")
    owed = pass_(api, lot["lot_id"], gate_, "exit", event_id="p-out", plate="E555EE")
    # the gate's link is our exit page, beside the booking page PaymentReturnUrl names
    link = urlsplit(owed["confirmation_url"])
    assert f"{link.scheme}://{link.netloc}{link.path}" == system["stack"].api_url + "/exit.html"
    query = {name: values[0] for name, values in parse_qs(link.query).items()}
    assert (query["lot"], query["ticket"]) == (lot["lot_id"], entered["ticket_id"])
    [payment] = sandbox.payments(ticket_id=entered["ticket_id"])
    assert payment["confirmation"]["return_url"] == owed["confirmation_url"]     # the provider brings the driver back
    path = f"/lots/{lot['lot_id']}/tickets/{entered['ticket_id']}/exit-payment"
    shown = api.request("GET", path, params={"key": query["key"]})
    assert shown.status_code == 200 and shown.headers["Cache-Control"] == "private, no-store"
    page = shown.json()
    documented(page, "ExitPayment")
    assert (page["state"], page["plate"], page["amount"], page["lot"]["name"], page["exited_at"]) == \
        ("pending", "E555EE", {"value": "90.00", "currency": "RUB"}, "Exit page lot", None)
    assert page["confirmation_url"] == payment["confirmation"]["confirmation_url"]
    other_key = ("y" if query["key"][0] == "x" else "x") + query["key"][1:]
    wrong = api.request("GET", path, params={"key": other_key})
    assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "exit_payment_not_found"
    assert api.request("GET", path).status_code == 404
    sandbox.pay(payment["id"])
    receipt = api.request("GET", path, params={"key": query["key"]}).json()
    assert (receipt["state"], receipt["confirmation_url"]) == ("paid", None)
    assert pass_(api, lot["lot_id"], gate_, "exit", event_id="p-out-2", plate="E555EE")["exit_granted"] is True
    assert api.request("GET", path, params={"key": query["key"]}).json()["exited_at"]


def test_a_reservation_nobody_used_becomes_no_show_by_the_timer_and_frees_the_space(api, sandbox, system):
    # The window began at the current half hour, with room left in it for the grace, the move past
    # it and the checks: the space is reserved again for the same window once it is free, and a
    # window begun a half hour back would be refused as begun.
    begun = current_half_hour(room=NO_SHOW_MARGIN_SECONDS + SWEEP_STEP_SECONDS + ROOM_SECONDS)
    start, end = (iso(moment).replace(".000Z", "Z") for moment in (begun, begun + timedelta(hours=2)))
    # Paid after the window began, each reservation's no-show timer counts from its confirmation
    # (Booking.confirmed: the later of the window's start and the payment), so none falls due
    # before `due`; the stack's clock moves only with the machine's meanwhile, so the bookings are
    # paid and seen taken well before.
    grace = NO_SHOW_MARGIN_SECONDS
    due = system_clock() + timedelta(seconds=grace)
    lot = create_lot(api, spaces=[{"space_id": "R1", "type": "REGULAR"}], no_show_grace_seconds=grace)
    # a second lot whose policy refunds a no-show and keeps the money of a cancellation
    kind = create_lot(api, spaces=[{"space_id": "R1", "type": "REGULAR"}, {"space_id": "R2", "type": "REGULAR"}],
                      no_show_grace_seconds=grace, policy={"refund_no_show": True, "cancel_refund": "none"})
    who, other, third = customer(), customer(), customer()
    held = reserve(api, lot["lot_id"], "REGULAR", start, end, who=who).json()
    paid(api, sandbox, held, who)
    refundable = reserve(api, kind["lot_id"], "REGULAR", start, end, who=other).json()
    paid(api, sandbox, refundable, other)
    kept = reserve(api, kind["lot_id"], "REGULAR", start, end, who=third).json()
    paid(api, sandbox, kept, third)
    cancelled = api.cancel(kept["booking_id"], third)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED_NO_REFUND", cancelled.text
    assert "refund" not in api.booking(kept["booking_id"], third)["payment"]
    assert system_clock() < due, "paying took longer than the margin; the 409 below proves nothing"
    assert reserve(api, lot["lot_id"], "REGULAR", start, end).status_code == 409
    # past the last confirmation's timer (every one was confirmed before now), the sweeper's
    # one-second grace (SweepGraceSeconds) and one interval of the stack's scheduled sweeper (a
    # minute: the timer's only clock); the move returns once it is idle
    system["stack"].advance_clock(grace + SWEEP_STEP_SECONDS)
    gone = api.booking(held["booking_id"], who)
    assert gone["status"] == "NO_SHOW" and gone["journal"][-1]["actor"] == "timer"
    assert gone["payment"]["status"] == "succeeded" and "refund" not in gone["payment"]   # no refund by default
    assert reserve(api, lot["lot_id"], "REGULAR", start, end).status_code == 201
    back = api.wait_status(refundable["booking_id"], other, "REFUNDED")        # the policy refunds the no-show
    assert [e["action"] for e in back["journal"] if e["actor"] == "timer"][0] == "no_show_refund"
    assert back["payment"]["refund"]["status"] == "succeeded"


def test_a_window_begun_before_it_is_paid_is_not_a_no_show_at_the_next_sweep(api, sandbox, system):
    """Issue 42, finding 4: the no-show timer was the window's start plus the grace; a window begun
    at the current half hour with the grace already run out when it was paid became NO_SHOW at the
    next sweep, money kept. The timer counts from the payment when that is later."""
    start, end = now_window()
    begun = (system_clock() - parse_iso(start)).total_seconds()
    if begun < 15:
        # the half hour began a moment ago: move the stack's clock on so the old timer is past
        system["stack"].advance_clock(15 - begun)
        begun = (system_clock() - parse_iso(start)).total_seconds()
    grace = int(begun) - 10    # from + grace: ten seconds ago, before the payment
    lot = create_lot(api, spaces=[{"space_id": "R1", "type": "REGULAR"}], no_show_grace_seconds=grace)
    who = customer()
    held = reserve(api, lot["lot_id"], "REGULAR", start, end, who=who).json()
    confirmed = paid(api, sandbox, held, who)
    system["stack"].invoke("SweepDueFunction", {"detail-type": "Scheduled Event", "source": "aws.events"})
    assert api.booking(held["booking_id"], who)["status"] == "CONFIRMED"
    assert confirmed["status"] == "CONFIRMED"
