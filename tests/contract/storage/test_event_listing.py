"""An offering's listing change (services/listing.py): its fields, its index items and the
announcement of a change of time or venue in one transaction, on the catalog version it read.
Also: the in-memory stores that stand for the adapter's one store under a service needing two
ports of it have every member of each, with the same parameters."""
from __future__ import annotations

import inspect

import pytest

from holdfast import ports
from holdfast.ports import StaleBooking
from tests.support.fake_store import FakeBookingStore, FakeNotificationStore

from .bookings import AT, offering

ANNOUNCED = {"type": "event.changed", "version": 1, "at": "2030-01-01T12:00:00.000Z",
             "changes": {"venue": {"before": "Hall", "after": "Arena"}}}


def index_item(event_id: str, partition: str, name: str) -> dict:
    return {"pk": partition, "sk": f"2030-02-01T20:00:00.000Z#{event_id}", "event_id": event_id, "name": name}


def test_an_organizers_offerings_are_listed_newest_first_and_only_its_own(backend, ids):
    store, acme, other = backend.store, ids("org-acme"), ids("org-other")
    older, newer, theirs, nobodys = ids("ev-old"), ids("ev-new"), ids("ev-theirs"), ids("ev-none")
    for event_id, organizer, created in ((older, acme, "2030-01-01T10:00:00.000Z"),
                                         (newer, acme, "2030-01-02T10:00:00.000Z"),
                                         (theirs, other, "2030-01-03T10:00:00.000Z"), (nobodys, None, AT)):
        event = {"event_id": event_id, "name": "Club night", "created_at": created, "hold_ttl_seconds": 600,
                 "inventory_kind": "counted", **({"organizer_id": organizer} if organizer else {})}
        store.put_event(event, [10], None, f"fp-{event_id}")
    assert [event["event_id"] for event in store.owned_offerings(acme)] == [newer, older]
    assert [event["event_id"] for event in store.owned_offerings(other)] == [theirs]
    assert store.owned_offerings(ids("org-new")) == []


def test_a_change_writes_the_fields_the_index_and_the_announcement_together(backend, ids):
    store, event_id = backend.store, ids("ev")
    offering(store, event_id)
    old = index_item(event_id, ids("list"), "Club night")
    store.update_event_listing(event_id, 0, {"published": True, "catalog_version": 1}, [], [old])
    assert backend.raw(old["pk"], old["sk"]) == old
    new = index_item(event_id, ids("word"), "Club night")
    announced = {**ANNOUNCED, "event_id": event_id, "version": 2}
    dropped = [(old["pk"], old["sk"])]
    store.update_event_listing(event_id, 1, {"venue": "Arena", "catalog_version": 2}, dropped, [new],
                               outbox=announced)
    event = backend.raw(f"EVENT#{event_id}", "META")
    assert (event["venue"], event["published"], event["catalog_version"]) == ("Arena", True, 2)
    assert event["name"] == "Club night"                                 # the fields not changed are kept
    assert backend.raw(old["pk"], old["sk"]) is None and backend.raw(new["pk"], new["sk"]) == new
    announcement = backend.raw(f"EVENT#{event_id}", "OUTBOX#000002")
    assert {k: v for k, v in announcement.items() if k not in ("pk", "sk", "ttl")} == announced
    assert announcement["ttl"] > 0


def test_a_change_on_a_version_that_moved_is_stale_and_writes_nothing(backend, ids):
    store, event_id = backend.store, ids("ev")
    offering(store, event_id)
    store.update_event_listing(event_id, 0, {"name": "First", "catalog_version": 1}, [], [])
    item = index_item(event_id, ids("list"), "Second")
    for read in (0, 2):
        announced = {**ANNOUNCED, "event_id": event_id, "version": read + 1}
        with pytest.raises(StaleBooking):
            store.update_event_listing(event_id, read, {"name": "Second", "catalog_version": read + 1}, [],
                                       [item], outbox=announced)
    event = backend.raw(f"EVENT#{event_id}", "META")
    assert (event["name"], event["catalog_version"]) == ("First", 1)
    assert backend.raw(item["pk"], item["sk"]) is None
    assert backend.raw(f"EVENT#{event_id}", "OUTBOX#000001") is None
    assert backend.raw(f"EVENT#{event_id}", "OUTBOX#000003") is None


def test_a_missing_event_is_stale_and_nothing_is_written(backend, ids):
    event_id = ids("ev")
    item = index_item(event_id, ids("list"), "Ghost")
    with pytest.raises(StaleBooking):
        backend.store.update_event_listing(event_id, 0, {"name": "Ghost", "catalog_version": 1}, [], [item])
    assert backend.raw(f"EVENT#{event_id}", "META") is None and backend.raw(item["pk"], item["sk"]) is None


def test_an_index_item_dropped_and_put_again_is_put(backend, ids):
    """A renamed event keeps its sort key in a partition: one write of that item, not two."""
    store, event_id = backend.store, ids("ev")
    offering(store, event_id)
    item = index_item(event_id, ids("list"), "Club night")
    store.update_event_listing(event_id, 0, {"catalog_version": 1}, [], [item])
    renamed = {**item, "name": "Renamed"}
    store.update_event_listing(event_id, 1, {"name": "Renamed", "catalog_version": 2},
                               [(item["pk"], item["sk"])], [renamed])
    assert backend.raw(item["pk"], item["sk"]) == renamed


@pytest.mark.parametrize("port, fake", [
    (ports.NotificationStore, FakeNotificationStore),
    (ports.Catalog, FakeBookingStore),
], ids=lambda value: value.__name__)
def test_the_fake_has_the_ports_members_with_the_same_parameters(port, fake):
    members = sorted(port.__protocol_attrs__)
    if port is ports.Catalog:
        # Not faked: the listing's query (its filters are DynamoDB expressions) and an organizer's
        # offerings and their comps (the sales view: no service test on the fake reads them).
        members = [member for member in members if member not in ("query_listing", "owned_offerings",
                                                                   "comps_given")]
    for member in members:
        assert hasattr(fake, member), f"{fake.__name__} lacks {port.__name__}.{member}"
        wanted = [p for p in inspect.signature(getattr(port, member)).parameters if p != "self"]
        found = [p for p in inspect.signature(getattr(fake, member)).parameters if p != "self"]
        assert found == wanted, f"{fake.__name__}.{member}{found} is not {port.__name__}.{member}{wanted}"
