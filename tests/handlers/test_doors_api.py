"""An event's doors through their handler (functions/doors_api): a door made and revoked, scans
online (admitted, already_checked_in with the first scan's door and time, ticket_void, wrong_event,
bad_token, a repeat of a pass id answered the same), a customer's cancel of a checked-in booking
refused, the organizer's allowed with a note in the journal, the offline sync with a double entry
opening a check-in case, and the check-ins per door."""
import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from holdfast import wiring
from tests.handlers.conftest import ORGANIZER_KEY
from tests.handlers.test_api_handlers import book
from tests.handlers.test_tickets_api import confirm, tickets_env, view  # noqa: F401 - the tickets' fixture
from tests.support.handlers import api_event, call

ORGANIZER = {"X-Api-Key": ORGANIZER_KEY}


def request(method, path, body=None, headers=None, folder="doors_api"):
    template = re.sub(r"/[0-9a-f-]{36}", "/{id}", path)
    params = dict(zip(re.findall(r"\{(\w+)\}", template), re.findall(r"[0-9a-f-]{36}", path)))
    event = {"resource": path, "path": path, "httpMethod": method, "headers": headers or {},
             "multiValueHeaders": {k: [v] for k, v in (headers or {}).items()}, "pathParameters": params,
             "queryStringParameters": None, "body": None if body is None else json.dumps(body),
             "isBase64Encoded": False, "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}}
    names = {"doors_api": ("event_id", "door_id")}
    event["pathParameters"] = dict(zip(names.get(folder, ("event_id",)), re.findall(r"[0-9a-f-]{36}", path)))
    return call(folder, event)


def create_event(key="night-1", **overrides):
    body = json.loads(api_event("create_event.json")["body"]) | overrides
    status, created = call("events_api", api_event("create_event.json", headers=ORGANIZER | {"Idempotency-Key": key},
                                                   body=body))
    assert status == 201, created
    return created


def door(event_id, name="Main"):
    status, made = request("POST", f"/events/{event_id}/doors", {"name": name}, ORGANIZER)
    assert status == 201, made
    return made


def scan(event_id, made, pass_id, token):
    return request("POST", f"/events/{event_id}/doors/{made['door_id']}/scan", {"event_id": pass_id, "token": token},
                   {"X-Door-Key": made["door_key"]})


def paid_tickets(provider, event_id, quantity, key):
    status, held = book(event_id, {"quantity": quantity}, key=key)
    assert status == 201, held
    confirm(provider, held["booking_id"])
    return held["booking_id"], view(held["booking_id"])[1]["tickets"]


def test_scans_online_answer_each_reason_once(tickets_env):
    event = create_event(capacity=20)
    other = create_event("night-2", capacity=5, name="Another night")
    main, side = door(event["event_id"], "Main"), door(event["event_id"], "Side")
    assert main["door_key"].startswith("dk_") and main["kid"]
    booking_id, tickets = paid_tickets(tickets_env, event["event_id"], 2, "k1")

    status, first = scan(event["event_id"], main, "m-1", tickets[0]["token"])
    assert status == 200 and first["admitted"] is True and first["reason"] == "admitted"
    assert first["ticket_id"] == tickets[0]["ticket_id"] and first["seat_id"] is None
    assert scan(event["event_id"], main, "m-1", tickets[0]["token"]) == (200, first)   # a repeat: the same answer
    status, again = scan(event["event_id"], side, "s-1", tickets[0]["token"])
    assert again["admitted"] is False and again["reason"] == "already_checked_in"
    assert again["checked_in_at"] == first["checked_in_at"] and again["door_id"] == main["door_id"]
    status, reused = scan(event["event_id"], main, "m-1", tickets[1]["token"])
    assert status == 409 and reused["error"]["code"] == "pass_id_reused"

    other_booking, others = paid_tickets(tickets_env, other["event_id"], 1, "k2")
    assert scan(event["event_id"], main, "m-2", others[0]["token"])[1]["reason"] == "wrong_event"
    assert scan(event["event_id"], main, "m-3", "not-a-token")[1]["reason"] == "bad_token"
    assert scan(event["event_id"], main, "m-4", tickets[0]["token"][:-4] + "AAAA")[1]["reason"] == "bad_token"

    # the customer cannot cancel a booking someone came in on; the untouched one is cancelled, void
    status, refused = call("bookings_api", {**_cancel(booking_id)})
    assert status == 409 and refused["error"]["code"] == "checked_in"
    status, cancelled = call("bookings_api", _cancel(other_booking, "customer-42"))
    assert status == 200 and cancelled["status"] in ("REFUND_PENDING", "REFUNDED")
    other_door = door(other["event_id"])
    assert scan(other["event_id"], other_door, "o-1", others[0]["token"])[1]["reason"] == "ticket_void"
    status, config = request("GET", f"/events/{other['event_id']}/doors/{other_door['door_id']}/config",
                             headers={"X-Door-Key": other_door["door_key"]})
    assert status == 200 and config["voided_tickets"] == [others[0]["ticket_id"]]
    assert config["public_key"] == other_door["public_key"]

    status, seen = request("GET", f"/events/{event['event_id']}/checkins", headers=ORGANIZER)
    assert status == 200 and seen["checked_in"] == 1
    assert {row["name"]: row["checked_in"] for row in seen["doors"]} == {"Main": 1, "Side": 0}

    # a revoked door's key answers 401, on a repeat too
    path = f"/events/{event['event_id']}/doors/{side['door_id']}"
    assert request("DELETE", path, headers=ORGANIZER)[0] == 204
    assert request("DELETE", path, headers=ORGANIZER)[0] == 204
    status, denied = scan(event["event_id"], side, "s-2", tickets[1]["token"])
    assert status == 401 and denied["error"]["code"] == "door_unauthorized"
    # what it admitted offline before it heard is still reported: refused, with a case, not checked in
    offline = {"seq": 1, "event_id": "s-3", "token": tickets[1]["token"], "at": first["checked_in_at"]}
    status, synced = request("POST", f"{path}/sync", {"events": [offline]}, {"X-Door-Key": side["door_key"]})
    assert status == 200 and synced["expected_seq"] == 2
    assert synced["results"][0]["result"]["reason"] == "door_deleted" and synced["results"][0]["conflict"]["case_id"]
    assert request("GET", f"{path}/config", headers={"X-Door-Key": side["door_key"]})[0] == 401
    assert request("GET", f"/events/{event['event_id']}/checkins", headers=ORGANIZER)[1]["checked_in"] == 1


def test_the_organizer_cancelling_the_event_journals_the_checked_in(tickets_env):
    event = create_event(capacity=5)
    main = door(event["event_id"])
    booking_id, tickets = paid_tickets(tickets_env, event["event_id"], 1, "k3")
    assert scan(event["event_id"], main, "p-1", tickets[0]["token"])[1]["admitted"] is True
    wiring.cancellation_job().settle(event["event_id"], booking_id, "storm")
    _, journal = wiring.store().get_booking_with_journal(booking_id)
    assert any("1 already checked in" in entry.decision for entry in journal)


def test_two_doors_admitting_one_ticket_offline_open_one_case(tickets_env):
    event = create_event(capacity=5)
    main, side = door(event["event_id"], "Main"), door(event["event_id"], "Side")
    _, tickets = paid_tickets(tickets_env, event["event_id"], 1, "k4")
    at = datetime.now(timezone.utc)

    def sync(made, events):
        return request("POST", f"/events/{event['event_id']}/doors/{made['door_id']}/sync", {"events": events},
                       {"X-Door-Key": made["door_key"]})

    def offline(seq, pass_id, minutes):
        return {"seq": seq, "event_id": pass_id, "token": tickets[0]["token"],
                "at": (at + timedelta(minutes=minutes)).isoformat()}

    status, first = sync(main, [offline(1, "a-1", 0)])
    assert status == 200 and first["results"][0]["status"] == "applied"
    assert first["results"][0]["result"]["admitted"] is True
    status, second = sync(side, [offline(2, "b-2", 1)])   # its first scan lost: a gap, held
    assert second["expected_seq"] == 1 and second["results"][0]["status"] == "held"
    status, second = sync(side, [offline(1, "b-1", 1), offline(2, "b-2", 2)])
    results = {r["event_id"]: r for r in second["results"]}
    assert results["b-1"]["status"] == "applied" and results["b-1"]["result"]["reason"] == "already_checked_in"
    assert results["b-1"]["conflict"]["needs_review"] is True and results["b-1"]["conflict"]["case_id"]
    assert sync(side, [offline(1, "b-1", 1)])[1]["results"][0]["status"] == "duplicate"

    status, reviews = call("admin_api", {"resource": "/admin/reviews", "path": "/admin/reviews", "httpMethod": "GET",
                                         "headers": ORGANIZER, "multiValueHeaders": {}, "pathParameters": None,
                                         "queryStringParameters": None, "body": None,
                                         "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}})
    cases = [c for c in reviews["checkin_cases"] if c["event_id"] == event["event_id"]]
    assert status == 200 and len(cases) == 2 and {c["reason"] for c in cases} == {"double_checkin"}
    assert {c["first_door_id"] for c in cases} == {main["door_id"]}
    status, seen = request("GET", f"/events/{event['event_id']}/checkins", headers=ORGANIZER)
    assert seen["checked_in"] == 1 and seen["recent"][0]["mode"] == "offline"


def _cancel(booking_id, customer="customer-42"):
    path = f"/bookings/{booking_id}/cancel"
    return {"resource": "/bookings/{booking_id}/cancel", "path": path, "httpMethod": "POST",
            "headers": {"X-Customer-Id": customer}, "multiValueHeaders": {"X-Customer-Id": [customer]},
            "pathParameters": {"booking_id": booking_id}, "queryStringParameters": None, "body": None,
            "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}}


def _organizer_cancel(booking_id, body, headers=ORGANIZER):
    path = f"/admin/bookings/{booking_id}/cancel"
    return call("admin_api", {"resource": "/admin/bookings/{booking_id}/cancel", "path": path, "httpMethod": "POST",
                              "headers": headers, "multiValueHeaders": {k: [v] for k, v in headers.items()},
                              "pathParameters": {"booking_id": booking_id}, "queryStringParameters": None,
                              "body": json.dumps(body), "isBase64Encoded": False,
                              "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}})


def test_the_organizer_cancels_a_checked_in_booking_with_its_decision_journalled(tickets_env):
    """Issue 32: the customer cannot cancel once someone came in on the booking; its organizer
    can, money back, the operator's name and note and the count inside in the journal; the
    tickets are void from then on, and a repeat answers the booking as it is."""
    event = create_event(capacity=5)
    main = door(event["event_id"])
    booking_id, tickets = paid_tickets(tickets_env, event["event_id"], 2, "k5")
    assert scan(event["event_id"], main, "c-1", tickets[0]["token"])[1]["admitted"] is True
    assert call("bookings_api", _cancel(booking_id))[1]["error"]["code"] == "checked_in"
    terms = view(booking_id)[1]    # the view says so before the customer tries: no refund promised
    assert terms["cancellable"] is False and terms["cancel_refund"] is False
    assert terms["texts"]["cancel"] == "cancel.checked_in"

    decision = {"operator": "olga", "note": "came to the wrong night; given back"}
    status, bad = _organizer_cancel(booking_id, {"operator": "olga"})
    assert status == 400 and bad["error"]["code"] == "validation_error"
    assert wiring.store().get_booking(booking_id).status.value == "CONFIRMED"   # nothing half-written
    assert _organizer_cancel(booking_id, decision, {"X-Api-Key": "not-a-key"})[0] == 401

    status, cancelled = _organizer_cancel(booking_id, decision)
    assert status == 200 and cancelled["status"] in ("REFUND_PENDING", "REFUNDED"), cancelled
    _, journal = wiring.store().get_booking_with_journal(booking_id)
    [entry] = [e for e in journal if e.action == "cancelled_by_organizer"]
    assert entry.actor == "operator" and "olga: came to the wrong night" in entry.decision
    assert "1 already checked in" in entry.decision
    assert scan(event["event_id"], main, "c-2", tickets[1]["token"])[1]["reason"] == "ticket_void"
    repeat_status, repeat = _organizer_cancel(booking_id, decision)
    assert repeat_status == 200 and repeat["status"] == wiring.store().get_booking(booking_id).status.value
    assert sum(e.action == "cancelled_by_organizer" for e in wiring.store().get_booking_with_journal(booking_id)[1]) == 1


def test_the_organizer_cancels_only_a_confirmed_booking(tickets_env):
    event = create_event(capacity=5)
    status, held = book(event["event_id"], {"quantity": 1}, key="k6")
    assert status == 201, held
    status, refused = _organizer_cancel(held["booking_id"], {"operator": "olga", "note": "no"})
    assert status == 409 and refused["error"]["code"] == "not_cancellable"
    assert _organizer_cancel("00000000-0000-4000-8000-000000000000", {"operator": "olga", "note": "no"})[0] == 404


def test_a_synced_scan_dated_ahead_of_the_server_clock_fails_for_good_with_a_case(tickets_env):
    event = create_event(capacity=5)
    main = door(event["event_id"], "Main")
    _, tickets = paid_tickets(tickets_env, event["event_id"], 2, "k-ahead")
    now = datetime.now(timezone.utc)

    def sync(events):
        return request("POST", f"/events/{event['event_id']}/doors/{main['door_id']}/sync", {"events": events},
                       {"X-Door-Key": main["door_key"]})

    def offline(seq, ticket, ahead):
        return {"seq": seq, "event_id": f"f-{seq}", "token": tickets[ticket]["token"], "at": (now + ahead).isoformat()}

    status, answer = sync([offline(1, 0, timedelta(minutes=10)), offline(2, 1, timedelta(seconds=60))])
    assert status == 200 and answer["expected_seq"] == 3                  # the sequence moves on
    future, fine = answer["results"]
    assert (future["status"], future["result"]["error"]["code"]) == ("failed", "pass_time_in_future")
    assert future["result"]["error"]["details"]["max_skew_seconds"] == 120
    assert future["conflict"]["reason"] == "pass_time_in_future"         # let in: an operator looks
    assert fine["status"] == "applied" and fine["result"]["admitted"] is True   # inside the skew
    again = sync([offline(1, 0, timedelta(minutes=10))])[1]["results"][0]
    assert again["status"] == "failed" and again["result"] == future["result"]   # a repeat: the same answer

    status, seen = request("GET", f"/events/{event['event_id']}/checkins", headers=ORGANIZER)
    assert seen["checked_in"] == 1                                       # the future scan checked nothing in
    status, reviews = call("admin_api", {"resource": "/admin/reviews", "path": "/admin/reviews", "httpMethod": "GET",
                                         "headers": ORGANIZER, "multiValueHeaders": {}, "pathParameters": None,
                                         "queryStringParameters": None, "body": None,
                                         "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}})
    cases = [c for c in reviews["checkin_cases"] if c["event_id"] == event["event_id"]]
    assert [(c["reason"], c["ticket_id"], c["door_id"]) for c in cases] == \
        [("pass_time_in_future", tickets[0]["ticket_id"], main["door_id"])]
    # online, the scan is the server's own time: the ticket the case names is admitted once
    assert scan(event["event_id"], main, "m-now", tickets[0]["token"])[1]["admitted"] is True


def test_a_cancelled_booking_whose_refund_is_refused_admits_no_one_online_or_offline(tickets_env):
    """Issue 42, finding 5: a refund the provider refuses moves the cancelled booking to MANUAL_REVIEW,
    which the doors' hand-written voided set did not name, so an offline door admitted its tickets.
    One rule (domain/entry_rights.py) now answers the online door, the config's list and the view."""
    event = create_event("night-refused", capacity=5)
    main = door(event["event_id"])
    booking_id, tickets = paid_tickets(tickets_env, event["event_id"], 2, "k-refused")
    tickets_env.fail("create_refund", "refused")
    status, cancelled = call("bookings_api", _cancel(booking_id))
    assert status == 200, cancelled
    status, seen = view(booking_id)
    assert seen["status"] == "MANUAL_REVIEW" and "tickets" not in seen, seen
    status, config = request("GET", f"/events/{event['event_id']}/doors/{main['door_id']}/config",
                             headers={"X-Door-Key": main["door_key"]})
    assert status == 200 and config["voided_tickets"] == sorted(t["ticket_id"] for t in tickets)
    assert scan(event["event_id"], main, "r-1", tickets[0]["token"])[1]["reason"] == "ticket_void"


def test_a_scan_makes_one_read_and_its_transaction_and_a_wrong_key_answers_before_a_bad_body(tickets_env,
                                                                                             monkeypatch):
    """Issue 49's lever: the door, the pass id's record, the booking and the ticket's check-in in
    one ``BatchGetItem`` (the keys are in the request and the verified token), then the
    transaction; a repeat reads once. Another call on the scan's path fails here."""
    import threading
    from collections import Counter

    from botocore.client import BaseClient

    event = create_event("night-calls", capacity=5)
    main = door(event["event_id"])
    _, tickets = paid_tickets(tickets_env, event["event_id"], 1, "calls-1")
    calls: list[str] = []
    original, here = BaseClient._make_api_call, threading.get_ident()

    def counting(client, operation, params):
        if threading.get_ident() == here:
            calls.append(operation)
        return original(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", counting)
    status, first = scan(event["event_id"], main, "c-1", tickets[0]["token"])
    assert status == 200 and first["admitted"] is True
    assert Counter(calls) == {"BatchGetItem": 1, "TransactWriteItems": 1}, calls
    calls.clear()
    assert scan(event["event_id"], main, "c-1", tickets[0]["token"]) == (200, first)
    assert Counter(calls) == {"BatchGetItem": 1}, calls

    path = f"/events/{event['event_id']}/doors/{main['door_id']}/scan"
    status, denied = request("POST", path, {"event_id": "c-2"}, {"X-Door-Key": "dk_wrong"})
    assert status == 401 and denied["error"]["code"] == "door_unauthorized"
    status, bad = request("POST", path, {"event_id": "c-2"}, {"X-Door-Key": main["door_key"]})
    assert status == 400, bad


def test_a_postponed_events_tickets_admit_past_the_old_start_until_the_new_one_plus_twelve_hours(
        tickets_env, tmp_path, monkeypatch):
    """Issue 42, "one fact, one place": a ticket's expiry is its event's start as the event says it
    when the ticket is signed. Before, it was the booking's copy of the start taken at hold time,
    which a PATCH of the start did not move: past the old start + 12 h every door refused every
    ticket of a postponed event ``ticket_expired``, however freshly the holder fetched it."""
    from holdfast.clock import CLOCK_FILE_VARIABLE
    from holdfast.domain.signatures import claimed

    event = create_event("postponed", capacity=5, starts_at="2030-05-01T20:00:00Z")
    main = door(event["event_id"])
    booking_id, before = paid_tickets(tickets_env, event["event_id"], 1, "pp-1")
    assert claimed(before[0]["token"])["exp"] == "2030-05-02T08:00:00.000Z"
    status, moved = call("events_api", api_event("update_event.json", headers=ORGANIZER,
                                                 path_params={"event_id": event["event_id"]},
                                                 body={"starts_at": "2030-05-08T20:00:00Z"}))
    assert status == 200 and moved["starts_at"] == "2030-05-08T20:00:00.000Z", moved

    # the clock (holdfast.clock's offset file, as the local stack turns it) a day past the old start
    offset = tmp_path / "clock-offset"
    offset.write_text(str((datetime(2030, 5, 2, 20, 0, tzinfo=timezone.utc) - datetime.now(timezone.utc))
                          .total_seconds()))
    monkeypatch.setenv(CLOCK_FILE_VARIABLE, str(offset))
    shown = view(booking_id)[1]["tickets"]
    status, admitted = scan(event["event_id"], main, "pp-scan-1", shown[0]["token"])
    assert status == 200 and admitted["admitted"] is True, admitted
    assert claimed(shown[0]["token"])["exp"] == "2030-05-09T08:00:00.000Z"
    # a ticket fetched before the postponement still expires with the start it was signed for
    status, old = scan(event["event_id"], main, "pp-scan-2", before[0]["token"])
    assert old["reason"] in ("ticket_expired", "already_checked_in") and old["admitted"] is False
    status, config = request("GET", f"/events/{event['event_id']}/doors/{main['door_id']}/config",
                             headers={"X-Door-Key": main["door_key"]})
    assert status == 200 and config["starts_at"] == "2030-05-08T20:00:00.000Z"
