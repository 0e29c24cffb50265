"""The products' shelves (services/listing.py, domain/search.py): a lot or service is listed once
however often it is published, a publish that lost a race reads again, names order a shelf, and
a cursor never crosses from one shelf or city to another."""
from __future__ import annotations

import pytest

from holdfast.domain import search
from holdfast.domain.errors import InvalidRequest
from holdfast.ports import StaleBooking
from tests.unit.test_parking import make_lot, parking, view_bookings  # noqa: F401


def shelf_items_of(store, partition):
    items, _ = store.query_listing(partition, *search.NAME_KEYS, 100, None)
    return items


def test_publishing_twice_writes_the_index_once(parking, store):
    lot = make_lot(parking, name="Arbat", city="Москва")
    first = parking.publish_lot(lot["lot_id"])
    version = store.get_event(lot["lot_id"])["catalog_version"]
    assert parking.publish_lot(lot["lot_id"]) == first
    assert store.get_event(lot["lot_id"])["catalog_version"] == version == 1
    assert [item["lot_id"] for item in shelf_items_of(store, "LOTS#CITY#москва")] == [lot["lot_id"]]
    assert {item["pk"] for item in shelf_items_of(store, "LOTS#ALL")} == {"LOTS#ALL"}
    # never on an event partition
    assert shelf_items_of(store, "LIST#ALL") == []
    assert store.query_listing("FIND#F#ar", "!", "\U0010ffff", 100, None)[0] == []


def test_a_publish_that_lost_a_race_reads_the_lot_again(parking, store, monkeypatch):
    lot = make_lot(parking, name="Race")
    real, calls = store.update_event_listing, []

    def once_stale(*args, **kwargs):
        calls.append(args[1])
        if len(calls) == 1:
            raise StaleBooking(lot["lot_id"])
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "update_event_listing", once_stale)
    assert parking.publish_lot(lot["lot_id"])["published"] is True
    assert calls == [0, 0] and store.get_event(lot["lot_id"])["published"] is True


def test_names_order_a_shelf_and_a_cursor_stays_with_its_query(parking):
    for name in ("Ёлки", "Arbat", "arbat north", "Zoo"):
        parking.publish_lot(make_lot(parking, name=name, city="Tver")["lot_id"])
    listed = parking.list_lots("tver", 10, None)
    assert [lot["name"] for lot in listed["lots"]] == ["Arbat", "arbat north", "Zoo", "Ёлки"]
    page = parking.list_lots("Tver", 2, None)
    assert [lot["name"] for lot in page["lots"]] == ["Arbat", "arbat north"]
    assert [lot["name"] for lot in parking.list_lots("Tver", 2, page["next_cursor"])["lots"]] == ["Zoo", "Ёлки"]
    for city in ("Kazan", None):
        with pytest.raises(InvalidRequest) as refused:
            parking.list_lots(city, 2, page["next_cursor"])
        assert refused.value.code == "invalid_cursor"


def test_a_name_key_stays_short_whatever_the_name():
    key = search.name_sort_key("ﷺ" * 200, "lot-1")     # NFKC makes each of these 18 letters
    assert key.startswith("N#") and key.endswith("\x01lot-1") and len(key.encode()) <= 2 + 200 + 6
    assert search.NAME_KEYS[0] <= key <= search.NAME_KEYS[1]


def test_a_lot_is_written_to_no_search_partition(parking, store):
    lot = make_lot(parking, name="Arbat", city="Tula")
    parking.publish_lot(lot["lot_id"])
    # GET /lots has no ?q=: nothing reads one
    assert store.query_listing("LOTS#FIND#F#ar", "!", "\U0010ffff", 100, None)[0] == []
    assert [item["lot_id"] for item in shelf_items_of(store, "LOTS#CITY#tula")] == [lot["lot_id"]]
