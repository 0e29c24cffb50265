"""The waiting room over HTTP on the local stack: a high-demand sale admits customers at the
configured rate (5/s by the template's default), only admitted customers can book, and once every
place is taken the rest are told so (sold_out) or kept waiting while holds may still lapse
(paused). Small and bounded: the local stack is slow."""
from __future__ import annotations

import time
import uuid

import pytest

pytestmark = pytest.mark.integration


def test_only_admitted_customers_book_and_sold_out_releases_the_queue(api):
    event = api.create_event(capacity=3, high_demand=True)
    assert event["high_demand"] is True
    event_id = event["event_id"]
    crowd = [f"crowd-{uuid.uuid4().hex[:8]}" for _ in range(8)]

    refused = api.book(event_id, crowd[0], {"quantity": 1})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "admission_required"

    numbers = {}
    for who in crowd:
        joined = api.request("POST", f"/events/{event_id}/queue", customer=who)
        assert joined.status_code == 200, joined.text
        numbers[who] = joined.json()["queue_number"]
    assert sorted(numbers.values()) == sorted(set(numbers.values()))  # one number each

    booked, final = [], {}
    deadline = time.monotonic() + 60
    while len(final) < len(crowd):
        assert time.monotonic() < deadline, f"the queue did not settle: {final}"
        for who in crowd:
            if who in final:
                continue
            status = api.request("GET", f"/events/{event_id}/queue", customer=who)
            assert status.status_code in (200, 429), status.text
            if status.status_code == 429:
                continue
            body = status.json()
            if body["status"] == "admitted":
                answer = api.request(
                    "POST", f"/events/{event_id}/bookings", customer=who, key=str(uuid.uuid4()),
                    json={"quantity": 1}, headers={"X-Admission-Token": body["admission_token"]})
                assert answer.status_code in (201, 409), answer.text
                if answer.status_code == 201:
                    booked.append(who)
                final[who] = "booked" if answer.status_code == 201 else answer.json()["error"]["code"]
            elif body["status"] == "sold_out":
                final[who] = "sold_out"
            elif body["status"] == "waiting" and body.get("paused") and len(booked) == 3:
                # Every place is held and none sold: admission pauses, because holds may still
                # lapse and return places. These customers keep their number.
                final[who] = "paused"
        time.sleep(0.3)

    assert len(booked) == 3
    assert set(final.values()) <= {"booked", "sold_out", "paused"}
    assert api.counts(event_id) == {"available": 0, "held": 3, "sold": 0}
    stolen = api.request("POST", f"/events/{event_id}/bookings", customer=crowd[-1], key=str(uuid.uuid4()),
                         json={"quantity": 1}, headers={"X-Admission-Token": "forged.token"})
    assert stolen.status_code == 403
