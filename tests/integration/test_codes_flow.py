"""Issue 45, codes over HTTP: the organizer makes, lists and ends an event's codes; a hold that
names one is discounted and takes a use in its own transaction; the use comes back when the hold
lapses or is cancelled unpaid; every code that cannot be used answers the same invalid_code; a
customer's tries are limited per minute."""
from __future__ import annotations

import uuid

import pytest
from tests.support.stack_time import days_ahead

pytestmark = pytest.mark.integration

RUB = "RUB"


def customer() -> str:
    return f"cust-{uuid.uuid4().hex[:10]}"


def make_code(api, event_id, **body):
    answer = api.request("POST", f"/events/{event_id}/codes", organizer=True, json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()


def codes(api, event_id):
    answer = api.request("GET", f"/events/{event_id}/codes", organizer=True)
    assert answer.status_code == 200, answer.text
    return {code["code"]: code for code in answer.json()["codes"]}


def refused(answer):
    assert answer.status_code == 400, answer.text
    return answer.json()["error"]["code"]


def test_a_percent_code_discounts_a_hold_and_counts_its_use(api, sandbox, system):
    event_id = api.create_event(capacity=10)["event_id"]
    made = make_code(api, event_id, code="Spring25", kind="percent", value=25, max_uses=2)
    assert made["code"] == "SPRING25" and made["uses"] == 0 and made["active"]
    alice = customer()
    held = api.book(event_id, alice, {"quantity": 2, "code": "spring25"})   # any case
    assert held.status_code == 201, held.text
    assert held.json()["amount"] == {"value": "1500.00", "currency": RUB}
    assert held.json()["code"] == {"code": "SPRING25", "full_amount": {"value": "2000.00", "currency": RUB}}
    assert codes(api, event_id)["SPRING25"]["uses"] == 1
    paying = api.pay(held.json()["booking_id"], alice)
    assert paying.status_code == 201 and paying.json()["amount"]["value"] == "1500.00"
    sandbox.pay(paying.json()["payment_id"])
    api.wait_status(held.json()["booking_id"], alice, "CONFIRMED")
    assert codes(api, event_id)["SPRING25"]["uses"] == 1
    # the places are counted as ever; the code's counter is not among them
    assert api.counts(event_id) == {"available": 8, "held": 0, "sold": 2}


def test_a_fixed_code_takes_its_amount_off_each_place(api, system):
    event_id = api.create_event(capacity=10)["event_id"]
    make_code(api, event_id, code="MINUS100", kind="fixed", value={"value": "100.00", "currency": RUB})
    held = api.book(event_id, customer(), {"quantity": 3, "code": "minus100"})
    assert held.status_code == 201, held.text
    assert held.json()["amount"] == {"value": "2700.00", "currency": RUB}


def test_a_used_up_code_is_refused_and_a_lapsed_hold_gives_its_use_back(api, system):
    event_id = api.create_event(capacity=10, hold_ttl_seconds=600)["event_id"]
    make_code(api, event_id, code="ONCE", kind="percent", value=10, max_uses=1)
    first = customer()
    held = api.book(event_id, first, {"quantity": 1, "code": "ONCE"})
    assert held.status_code == 201, held.text
    assert refused(api.book(event_id, customer(), {"quantity": 1, "code": "once"})) == "invalid_code"
    # the refusal held nothing
    assert api.counts(event_id)["held"] == 1
    system["stack"].advance_clock(610)   # the hold's ten minutes and its expiry tick's bucket, not waited for
    api.wait_status(held.json()["booking_id"], first, "EXPIRED", timeout=15)
    assert codes(api, event_id)["ONCE"]["uses"] == 0
    again = api.book(event_id, customer(), {"quantity": 1, "code": "once"})
    assert again.status_code == 201, again.text


def test_cancelling_an_unpaid_hold_gives_its_use_back(api, system):
    event_id = api.create_event(capacity=10)["event_id"]
    make_code(api, event_id, code="SOLO", kind="percent", value=50, max_uses=1)
    alice = customer()
    held = api.book(event_id, alice, {"quantity": 1, "code": "solo"}).json()
    cancelled = api.request("POST", f"/bookings/{held['booking_id']}/cancel", customer=alice)
    assert cancelled.status_code == 200, cancelled.text
    assert codes(api, event_id)["SOLO"]["uses"] == 0
    assert api.book(event_id, customer(), {"quantity": 1, "code": "solo"}).status_code == 201


def test_every_code_that_cannot_be_used_answers_the_same(api, system):
    event_id = api.create_event(capacity=10)["event_id"]
    make_code(api, event_id, code="LATER", kind="percent", value=10, valid_from=f"{days_ahead(30)}T00:00:00Z")
    make_code(api, event_id, code="PAST", kind="percent", value=10, valid_to="2020-01-01T00:00:00Z")
    make_code(api, event_id, code="ENDED", kind="percent", value=10)
    assert api.request("DELETE", f"/events/{event_id}/codes/ended", organizer=True).json()["active"] is False
    make_code(api, event_id, code="VIPONLY", kind="percent", value=10, price_categories=["vip"])
    answers = set()
    for code in ("NOSUCH", "LATER", "PAST", "ENDED", "VIPONLY"):
        answer = api.book(event_id, customer(), {"quantity": 1, "code": code})
        answers.add((answer.status_code, answer.json()["error"]["code"], answer.json()["error"]["message"]))
    assert answers == {(400, "invalid_code", "This code cannot be used.")}
    assert api.counts(event_id)["held"] == 0


def test_a_code_limits_each_customer_and_tries_are_limited_per_minute(api, system):
    event_id = api.create_event(capacity=20)["event_id"]
    make_code(api, event_id, code="ONEEACH", kind="percent", value=10, per_customer=1)
    alice = customer()
    assert api.book(event_id, alice, {"quantity": 1, "code": "oneeach"}).status_code == 201
    assert refused(api.book(event_id, alice, {"quantity": 1, "code": "oneeach"})) == "invalid_code"
    assert api.book(event_id, customer(), {"quantity": 1, "code": "oneeach"}).status_code == 201
    guesser = customer()
    answers = [api.book(event_id, guesser, {"quantity": 1, "code": f"GUESS{n}"}).status_code for n in range(12)]
    assert answers[:10] == [400] * 10 and answers[10:] == [429, 429]


def test_codes_are_the_organizers_own_and_made_once(api, system):
    event_id = api.create_event(capacity=10)["event_id"]
    make_code(api, event_id, code="SAME", kind="access", ticket_types=["press"])
    again = api.request("POST", f"/events/{event_id}/codes", organizer=True,
                        json={"code": "same", "kind": "percent", "value": 5})
    assert again.status_code == 409 and again.json()["error"]["code"] == "code_exists"
    bad = api.request("POST", f"/events/{event_id}/codes", organizer=True,
                      json={"code": "HALF", "kind": "percent", "value": 150})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_code_value"
    stranger = api.request("GET", f"/events/{event_id}/codes")
    assert stranger.status_code == 401


def test_an_access_code_unlocks_a_hidden_ticket_type_and_a_hidden_zone(api, system):
    event = api.create_event(
        capacity=None, price=None, price_categories=[{"id": "floor", "name": "Floor"}, {"id": "pit", "name": "Pit"}],
        prices=[{"price_category": "floor", "ticket_type": "adult", "price": {"value": "1000.00", "currency": RUB}},
                {"price_category": "floor", "ticket_type": "press", "price": {"value": "100.00", "currency": RUB},
                 "hidden": True},
                {"price_category": "pit", "ticket_type": "adult", "price": {"value": "3000.00", "currency": RUB}}],
        zones=[{"id": "floor", "name": "Floor", "capacity": 20, "price_category": "floor"},
               {"id": "pit", "name": "Pit", "capacity": 5, "price_category": "pit", "hidden": True}])
    event_id = event["event_id"]
    shown = api.request("GET", f"/events/{event_id}").json()
    assert [p["ticket_type"] for p in shown["prices"]] == ["adult", "adult"]
    assert [z["id"] for z in shown["zones"]] == ["floor"]
    make_code(api, event_id, code="PRESS", kind="access", ticket_types=["press"], max_uses=3)
    make_code(api, event_id, code="PITPASS", kind="access", zones=["pit"])
    make_code(api, event_id, code="TENOFF", kind="percent", value=10)
    press = {"quantity": 1, "zone": "floor", "ticket_type": "press"}
    assert refused(api.book(event_id, customer(), press)) == "not_on_sale"
    assert refused(api.book(event_id, customer(), {**press, "code": "TENOFF"})) == "invalid_code"
    assert refused(api.book(event_id, customer(), {**press, "code": "PITPASS"})) == "invalid_code"
    held = api.book(event_id, customer(), {**press, "code": "press"})
    assert held.status_code == 201, held.text
    assert held.json()["amount"] == {"value": "100.00", "currency": RUB}
    # a hold that asks for no type is sold the first type on open sale, never the hidden one
    plain = api.book(event_id, customer(), {"quantity": 1, "zone": "floor"})
    assert plain.status_code == 201 and plain.json()["amount"]["value"] == "1000.00"
    pit = {"quantity": 2, "zone": "pit"}
    assert refused(api.book(event_id, customer(), pit)) == "not_on_sale"
    held = api.book(event_id, customer(), {**pit, "code": "pitpass"})
    assert held.status_code == 201 and held.json()["amount"]["value"] == "6000.00"
    assert codes(api, event_id)["PRESS"]["uses"] == 1 and codes(api, event_id)["PITPASS"]["uses"] == 1


def test_an_order_line_takes_a_code_and_a_service_has_codes_too(api, system):
    event_id = api.create_event(capacity=10)["event_id"]
    make_code(api, event_id, code="ORDER20", kind="percent", value=20, max_uses=1)
    hall = api.create_resource()["resource_id"]
    yoga = api.create_service([hall])["service_id"]
    made = api.request("POST", f"/services/{yoga}/codes", organizer=True,
                       json={"code": "YOGA", "kind": "fixed", "value": {"value": "200.00", "currency": RUB}})
    assert made.status_code == 201, made.text
    slot = {"starts_at": f"{days_ahead(200)}T10:00:00+03:00", "resource_id": hall, "quantity": 1}
    alice = customer()
    placed = api.request("POST", "/orders", customer=alice, key=str(uuid.uuid4()), json={"lines": [
        {"event_id": event_id, "quantity": 2, "code": "order20"}, {"service_id": yoga, **slot, "code": "yoga"}]})
    assert placed.status_code == 201, placed.text
    body = placed.json()
    # 2 x 1000 less 20 %, and 700 less 200: priced on the server, line by line
    assert [line["amount"]["value"] for line in body["lines"]] == ["1600.00", "500.00"]
    assert body["amount"] == {"value": "2100.00", "currency": RUB}
    assert body["lines"][0]["code"]["full_amount"]["value"] == "2000.00"
    assert codes(api, event_id)["ORDER20"]["uses"] == 1
    # the code is used up: a second order names it on line 0 and holds nothing
    again = api.request("POST", "/orders", customer=customer(), key=str(uuid.uuid4()), json={"lines": [
        {"event_id": event_id, "quantity": 1, "code": "ORDER20"}]})
    assert refused(again) == "invalid_code" and again.json()["error"]["details"]["line"] == 0
    assert api.counts(event_id)["held"] == 2
    cancelled = api.request("POST", f"/orders/{body['order_id']}/cancel", customer=alice)
    assert cancelled.status_code == 200, cancelled.text
    assert codes(api, event_id)["ORDER20"]["uses"] == 0
    service_codes = api.request("GET", f"/services/{yoga}/codes", organizer=True).json()["codes"]
    assert [(c["code"], c["uses"]) for c in service_codes] == [("YOGA", 0)]
    booked = api.book_slot(yoga, customer(), {**slot, "code": "YOGA"})
    assert booked.status_code == 201 and booked.json()["amount"]["value"] == "500.00"


def test_a_lot_has_codes_and_a_reservation_or_an_orders_parking_line_takes_one(api, system):
    made = api.request("POST", "/lots", organizer=True, json={
        "name": "Codes parking", "spaces": [{"space_id": "P1", "type": "REGULAR"}, {"space_id": "P2", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "150.00", "currency": RUB}, "daily_cap": {"value": "900.00", "currency": RUB},
                   "grace_minutes": 10}})
    assert made.status_code == 201, made.text
    lot_id = made.json()["lot_id"]
    code = api.request("POST", f"/lots/{lot_id}/codes", organizer=True,
                       json={"code": "Park50", "kind": "percent", "value": 50, "max_uses": 1})
    assert code.status_code == 201, code.text
    assert api.request("POST", f"/lots/{lot_id}/codes", organizer=True,
                       json={"code": "PARK50", "kind": "percent", "value": 5}).status_code == 409
    day = days_ahead(200)
    window = {"vehicle_type": "REGULAR", "plate": "A123BC77", "from": f"{day}T18:00:00Z", "to": f"{day}T22:00:00Z"}
    # four hours at 150 less half
    held = api.request("POST", f"/lots/{lot_id}/reservations", customer=customer(), key=str(uuid.uuid4()),
                       json={**window, "code": "park50"})
    assert held.status_code == 201, held.text
    assert held.json()["amount"] == {"value": "300.00", "currency": RUB}
    listed = api.request("GET", f"/lots/{lot_id}/codes", organizer=True)
    assert listed.status_code == 200 and [(c["code"], c["uses"]) for c in listed.json()["codes"]] == [("PARK50", 1)]
    # used up: the next reservation naming it holds nothing
    again = api.request("POST", f"/lots/{lot_id}/reservations", customer=customer(), key=str(uuid.uuid4()),
                        json={**window, "plate": "B123BC77", "code": "PARK50"})
    assert refused(again) == "invalid_code"
    ended = api.request("POST", f"/lots/{lot_id}/codes", organizer=True,
                        json={"code": "GATE100", "kind": "fixed", "value": {"value": "100.00", "currency": RUB}})
    assert ended.status_code == 201, ended.text
    placed = api.request("POST", "/orders", customer=customer(), key=str(uuid.uuid4()), json={"lines": [
        {"lot_id": lot_id, **window, "plate": "C123BC77", "code": "gate100"}]})
    assert placed.status_code == 201, placed.text
    assert placed.json()["lines"][0]["amount"]["value"] == "500.00"
    gone = api.request("DELETE", f"/lots/{lot_id}/codes/gate100", organizer=True)
    assert gone.status_code == 200 and gone.json()["active"] is False
    late = api.request("POST", f"/lots/{lot_id}/reservations", customer=customer(), key=str(uuid.uuid4()),
                       json={**window, "plate": "D123BC77", "code": "GATE100"})
    assert refused(late) == "invalid_code"
