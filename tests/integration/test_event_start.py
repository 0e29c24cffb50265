"""An event is sold until it starts, over HTTP on the local stack: a hold and a waitlist join on an
event that has started are 409 ``event_started``, and neither the listing nor its search shows it,
even asked from a date before it; its own page still answers (a customer's booking links to it)."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from holdfast.clock import system_clock
from tests.support.flows import customer

pytestmark = pytest.mark.integration


def test_an_event_that_has_started_is_sold_no_more_nor_listed(api, system):
    word = f"started{uuid.uuid4().hex[:8]}"
    began = (system_clock() + timedelta(hours=1)).replace(microsecond=0)
    event = api.create_event(name=f"Evening {word}", starts_at=began.isoformat())
    assert api.request("POST", f"/events/{event['event_id']}/publish", organizer=True).status_code == 200
    before = api.book(event["event_id"], customer(), {"quantity": 1})
    assert before.status_code == 201, before.text
    # the stack's clock passes the start: an hour of its time, a moment of the machine's
    system["stack"].advance_clock((began - system_clock()).total_seconds() + 1)

    held = api.book(event["event_id"], customer(), {"quantity": 1})
    assert (held.status_code, held.json()["error"]["code"]) == (409, "event_started")
    joined = api.request("POST", f"/events/{event['event_id']}/waitlist", customer=customer(), json={"quantity": 1})
    assert (joined.status_code, joined.json()["error"]["code"]) == (409, "event_started")

    since = {"from": (began - timedelta(days=1)).isoformat()}
    listed = api.request("GET", "/events", params=since)
    assert listed.status_code == 200 and event["event_id"] not in [e["event_id"] for e in listed.json()["events"]]
    found = api.request("GET", "/events", params={**since, "q": word})
    assert found.status_code == 200 and found.json()["events"] == []
    assert api.request("GET", f"/events/{event['event_id']}").status_code == 200
