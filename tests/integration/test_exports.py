"""Issue 46's exports over HTTP on the local stack: the sales export lists exactly the confirmed
orders and the check-in export exactly the tickets admitted, each page a CSV file with a byte
order mark and a header row that Python's csv module reads, paged by the cursor in a header; an
organizer lists its own resources."""
from __future__ import annotations

import csv
import io

import pytest

from tests.integration.test_doors_flow import make_door, ok, scan, tickets_of
from tests.integration.test_organizers import new_organizer
from tests.support.api import BookingApi
from tests.integration.test_team_keys import key_of
from tests.support.flows import customer

pytestmark = pytest.mark.integration


def rows_of(answer) -> tuple[list[str], list[dict[str, str]]]:
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert answer.content.startswith(b"\xef\xbb\xbf"), "every page starts with the UTF-8 byte order mark"
    reader = csv.DictReader(io.StringIO(answer.content.decode("utf-8-sig"), newline=""))
    rows = list(reader)
    assert int(answer.headers["X-Export-Rows"]) == len(rows)
    return list(reader.fieldnames or []), rows


def every_page(api, path: str, **params) -> list[dict[str, str]]:
    rows, cursor = [], None
    for _ in range(20):
        answer = api.request("GET", path, organizer=True, params={**params, **({"cursor": cursor} if cursor else {})})
        rows += rows_of(answer)[1]
        cursor = answer.headers.get("X-Next-Cursor")
        if not cursor:
            return rows
    raise AssertionError("the export never reached its last page")


def test_the_sales_and_checkin_exports_list_exactly_the_confirmed_orders_and_the_admitted_tickets(api, sandbox):
    # an organizer of its own: an export without `offering` reads every offering the organizer has,
    # and the package's shared organizer has hundreds by the time this runs (46 s of the suite's
    # time, by where the file fell in the run; a few seconds on an organizer of two offerings)
    api = BookingApi(api.base, organizer_key=new_organizer(api, "Exports")["api_key"])
    event, other = api.create_event(capacity=10), api.create_event(capacity=5)
    first, _, tickets = tickets_of(api, sandbox, event["event_id"], 2)
    second, _, _ = tickets_of(api, sandbox, event["event_id"], 1)
    elsewhere, _, _ = tickets_of(api, sandbox, other["event_id"], 1)
    # a hold never paid is not an order
    ok(api.book(event["event_id"], customer(), {"quantity": 1}), 201)
    door = make_door(api, event["event_id"], "Main")
    assert ok(scan(api, event["event_id"], door, "p-1", tickets[0]["token"]))["admitted"] is True

    columns, sales = rows_of(api.request("GET", "/admin/exports/sales.csv", organizer=True,
                                         params={"offering": event["event_id"]}))
    assert columns[:4] == ["booking_id", "offering_id", "offering_name", "confirmed_at"]
    assert sorted(row["booking_id"] for row in sales) == sorted([first, second])
    assert {row["quantity"] for row in sales if row["booking_id"] == first} == {"2"}
    assert all(row["amount"].count(".") == 1 and len(row["amount"].split(".")[1]) == 2 for row in sales)
    assert all(row["confirmed_at"].endswith("Z") and len(row["confirmed_at"]) == 20 for row in sales)

    # every offering, a row a page: the cursor walks them all, each once
    everything = every_page(api, "/admin/exports/sales.csv", limit=1)
    ids = [row["booking_id"] for row in everything]
    assert {first, second, elsewhere} <= set(ids) and len(ids) == len(set(ids))
    assert set(ids) == {first, second, elsewhere}      # the organizer's, and no one else's

    _, checkins = rows_of(api.request("GET", "/admin/exports/checkins.csv", organizer=True,
                                      params={"offering": event["event_id"]}))
    assert [(row["ticket_id"], row["booking_id"], row["door_id"]) for row in checkins] == \
        [(tickets[0]["ticket_id"], first, door["door_id"])]

    _, attendees = rows_of(api.request("GET", "/admin/exports/attendees.csv", organizer=True,
                                       params={"offering": event["event_id"]}))
    assert sorted(row["booking_id"] for row in attendees) == sorted([first, first, second])

    # a time window after everything: the header row alone
    columns, none = rows_of(api.request("GET", "/admin/exports/sales.csv", organizer=True,
                                        params={"from": "2999-01-01"}))
    assert none == [] and columns[0] == "booking_id"


def test_exports_need_their_scope_and_refuse_what_is_not_theirs_with_a_code(api, sandbox):
    event = api.create_event(capacity=3)
    seller = key_of(api, name="Accountant", scopes=["sales:read"])
    refused = seller.request("GET", "/admin/exports/sales.csv", organizer=True)
    assert (refused.status_code, refused.json()["error"]["details"]) == (403, {"scope": "exports"})
    limited = key_of(api, name="Exports of one", scopes=["exports"], offerings=[event["event_id"]])
    other = api.create_event(capacity=3)
    hidden = limited.request("GET", "/admin/exports/sales.csv", organizer=True, params={"offering": other["event_id"]})
    assert (hidden.status_code, hidden.json()["error"]["code"]) == (404, "offering_not_found")
    for path, params, status, code in [("/admin/exports/tickets.csv", {}, 404, "export_not_found"),
                                       ("/admin/exports/sales", {}, 404, "export_not_found"),
                                       ("/admin/exports/sales.csv", {"from": "yesterday"}, 400, "invalid_time"),
                                       ("/admin/exports/sales.csv", {"cursor": "nonsense"}, 400, "invalid_cursor"),
                                       ("/admin/exports/sales.csv", {"limit": "0"}, 400, "invalid_limit")]:
        answer = api.request("GET", path, organizer=True, params=params)
        assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), path


def test_an_organizer_lists_its_own_resources_and_no_one_elses(api):
    body = {"name": "Hall B", "timezone": "Europe/Moscow", "opening_hours": {"open": "09:00", "close": "21:00"}}
    made = ok(api.request("POST", "/resources", organizer=True, key=customer(), json=body), 201)
    again = ok(api.request("POST", "/resources", organizer=True, key=customer(), json={**body, "name": "Hall C"}), 201)
    listed = ok(api.request("GET", "/resources", organizer=True))["resources"]
    ids = [row["resource_id"] for row in listed]
    assert made["resource_id"] in ids and again["resource_id"] in ids
    assert ids.index(made["resource_id"]) < ids.index(again["resource_id"])
    assert next(row for row in listed if row["resource_id"] == made["resource_id"]) == made
    stranger = api.__class__(api.base, organizer_key="local-organizer-key-2")
    theirs = ok(stranger.request("GET", "/resources", organizer=True))["resources"]
    assert made["resource_id"] not in [row["resource_id"] for row in theirs]
