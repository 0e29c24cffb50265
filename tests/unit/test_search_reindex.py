"""The search reindex (holdfast/tools/search_reindex.py, `python -m holdfast.tools.cli reindex-search`):
offerings published before the text search index have only the old ``WORD#`` items, which nothing
reads; after the reindex they are found by prefix and typo, the old items are gone, a second run
writes nothing, a stopped run resumes from the key it printed, and an edit racing it leaves no item
of a word it removed. On moto's DynamoDB, the table's own key schema."""
from __future__ import annotations

import json
import shlex

import pytest

from holdfast.tools import cli
from holdfast.adapters.codec import _attrs
from holdfast.adapters.offerings_store import OfferingStore
from holdfast.adapters.table_scan import ScanProgress
from holdfast.domain import search
from holdfast.ports import StaleBooking
from holdfast.products.appointments import services as appointment_services
from holdfast.products.appointments.schemas import ResourceIn, ServiceIn
from holdfast.products.appointments.services import AppointmentService
from holdfast.tools.search_reindex import reindex
from holdfast.services.listing import ListingService
from tests.unit.conftest import event_request
from tests.unit.test_parking import make_lot, parking, view_bookings  # noqa: F401
from tests.unit.test_search import found

TABLE = "unit-bookings"
WRITES = {"put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item"}


class CountingClient:
    """The table's client, counting the requests made through it; ``before_transaction`` runs once,
    just before the first transaction is sent (a writer racing the reindex)."""

    def __init__(self, client, before_transaction=None) -> None:
        self.client, self.calls, self.before_transaction = client, [], before_transaction

    def __getattr__(self, name):
        self.calls.append(name)
        if name == "transact_write_items" and self.before_transaction:
            race, self.before_transaction = self.before_transaction, None
            race()
        return getattr(self.client, name)


@pytest.fixture
def listing(store, clock):
    return ListingService(store, clock)


@pytest.fixture
def appointments(store, clock, bookings):
    return AppointmentService(store, clock, bookings, 600, id_salt="tests-deployment-salt")


def publish_the_old_way(store, offering_id, partitions, sort_key, fields, *texts):
    """Mark the offering published and write its index as the code before the search index did
    (dc29de0: services/listing.py ``index_item`` and ``shelf_items``, domain/search.py
    ``index_partitions`` and ``shelf_partitions``): a listing item per partition and one
    ``WORD#<token>`` partition per word, every item with the words as ``tokens``."""
    client = store.client
    client.update_item(TableName=TABLE, Key=_attrs({"pk": f"EVENT#{offering_id}", "sk": "META"}),
                       UpdateExpression="SET published = :yes, published_at = :at, catalog_version = :one",
                       ExpressionAttributeValues=_attrs({":yes": True, ":at": "2030-01-01T12:00:00Z", ":one": 1}))
    words = search.tokens(*texts)
    for pk in [*partitions(words)]:
        client.put_item(TableName=TABLE, Item=_attrs({"pk": pk, "sk": sort_key, **fields, "tokens": words or ["-"]}))


def old_event(catalog, store, **fields):
    event = catalog.create_event(event_request(**fields))
    meta = store.get_event(event["event_id"])
    shown = {key: meta[key] for key in ("event_id", "name", "venue", "city", "category", "starts_at", "price",
                                        "currency", "inventory_kind")}
    shown |= {"city_key": search.normalise(meta["city"]), "category_key": search.normalise(meta["category"])}
    publish_the_old_way(store, event["event_id"],
                        lambda words: search.index_partitions(meta) + [f"WORD#{word}" for word in words],
                        search.sort_key(meta), shown, meta["name"], meta["venue"])
    return event["event_id"]


def old_service(appointments, store, name, city):
    room = appointments.create_resource(ResourceIn.model_validate(
        {"name": "Hall A", "timezone": "Europe/Moscow", "opening_hours": {"open": "09:00", "close": "21:00"}}).command())
    made = appointments.create_service(ServiceIn.model_validate({
        "name": name, "city": city, "mode": "group", "capacity": 3, "duration_minutes": 60,
        "resource_ids": [room["resource_id"]], "price": {"value": "700.00", "currency": "RUB"}}).command())
    meta = store.get_event(made["service_id"])
    shelf = appointment_services.SHELF
    shown = {"service_id": meta["event_id"], "name": name, "city": city, "mode": "group", "duration_minutes": 60,
             "price": meta["price"], "currency": meta["currency"], "city_key": search.normalise(city)}
    publish_the_old_way(store, meta["event_id"],
                        lambda words: [f"{shelf}#ALL", f"{shelf}#CITY#{search.normalise(city)}"]
                        + [f"{shelf}#WORD#{word}" for word in words],
                        search.name_sort_key(name, meta["event_id"]), shown, name)
    return meta["event_id"]


def old_word_items(store):
    items = store.client.scan(TableName=TABLE)["Items"]
    return [item["pk"]["S"] for item in items if "WORD#" in item["pk"]["S"]]


def services_found(appointments, text):
    return [service["service_id"] for service in appointments.list_services(None, text, 10, None)["services"]]


def test_offerings_published_before_the_search_index_are_found_after_the_reindex(
        catalog, listing, appointments, parking, store):
    quartet = old_event(catalog, store, name="Квартет Бородина", venue="Большой зал", city="Москва",
                        category="Камерная музыка", starts_at="2030-03-01T19:00:00Z")
    yoga = old_service(appointments, store, "Morning yoga", "Kazan")
    lot = make_lot(parking, name="Arbat", city="Tula")
    parking.publish_lot(lot["lot_id"])
    assert found(listing, "квар") == found(listing, "Quartet") == [] and services_found(appointments, "yog") == []
    assert len(old_word_items(store)) == 6       # квартет, бородина, большой, зал; morning, yoga

    done = reindex(store.client, TABLE, page_size=7)

    assert found(listing, "квар") == found(listing, "Quartet") == found(listing, "kvratet") == [quartet]
    assert found(listing, "Borodin зал") == [quartet]
    assert services_found(appointments, "yog") == services_found(appointments, "mornign") == [yoga]
    assert old_word_items(store) == []
    assert (done.offerings, done.written, done.current, done.deleted) == (3, 2, 1, 6)
    assert [item["lot_id"] for item in parking.list_lots("Tula", 10, None)["lots"]] == [lot["lot_id"]]
    # the listing items were rewritten too: nothing of the old index is left
    assert all("tokens" not in item for item in store.client.scan(TableName=TABLE)["Items"])
    again = reindex(store.client, TABLE)
    assert (again.offerings, again.written, again.current, again.deleted) == (3, 0, 3, 0)


def test_a_second_run_writes_nothing(catalog, listing, store):
    old_event(catalog, store, name="Щелкунчик", venue="Мариинский театр")
    event = catalog.create_event(event_request(name="Spring quartet"))
    listing.publish(event["event_id"])       # published by today's code: already current
    reindex(store.client, TABLE)
    counting = CountingClient(store.client)
    again = reindex(counting, TABLE, page_size=3)
    assert (again.offerings, again.written, again.current, again.deleted) == (2, 0, 2, 0)
    assert not WRITES & set(counting.calls)
    assert found(listing, "schelk") == found(listing, "Щелкунчик")


def test_a_stopped_run_resumes_from_the_key_it_printed(catalog, listing, store, capsys):
    made = [old_event(catalog, store, name=f"Concert number {n}", venue="Hall",
                      starts_at=f"2030-03-0{n}T19:00:00Z") for n in range(1, 5)]
    assert cli.main(["reindex-search", "--table", TABLE, "--endpoint", "", "--page-size", "5",
                     "--max-pages", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["page 1", "page 2"]
    key = shlex.split(lines[1])[-1]
    assert json.loads(key)
    assert cli.main(["reindex-search", "--table", TABLE, "--endpoint", "", "--page-size", "5",
                     "--start", key]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].endswith("; done")
    assert sorted(found(listing, "koncert")) == sorted(made) and old_word_items(store) == []
    assert cli.main(["reindex-search", "--table", TABLE, "--endpoint", ""]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "0 offerings reindexed, 4 already current, 0 old word items deleted, 4 published offerings seen")


def test_the_printed_key_survives_the_shell_whatever_it_holds():
    # the page can end on any item: a listing partition of a city named with an apostrophe, say
    key = {"pk": "LIST#CITY#l'aquila", "sk": "2030-03-01T19:00:00Z#e-1"}
    line = ScanProgress(pages=1, next_start=key).resume()
    assert json.loads(shlex.split(line)[-1]) == key


def test_an_edit_racing_the_reindex_leaves_no_item_of_a_word_it_removed(catalog, listing, store):
    event_id = old_event(catalog, store, name="Nutcracker gala", venue="Hall")

    def rename():
        listing.update(event_id, {"name": "Swan lake"})

    done = reindex(CountingClient(store.client, before_transaction=rename), TABLE)

    assert found(listing, "nutcr") == found(listing, "gala") == []
    assert found(listing, "swan") == [event_id]
    removed = search.search_words("Nutcracker gala")
    partitions = {pk for pk, _ in search.find_keys("FIND", removed, "")}
    left = [item["sk"] for pk in partitions for item in store.query_listing(pk, "!", "\U0010ffff", 100, None)[0]
            if search.indexed_word(item["sk"]) in removed]
    assert left == []
    assert old_word_items(store) == []
    # read again after the edit won: its items were the edit's own
    assert (done.written, done.current) == (0, 1)


def test_an_offering_edited_under_every_attempt_stops_the_run_with_its_key(catalog, store, monkeypatch, capsys):
    event_id = old_event(catalog, store, name="Busy gala")

    def always_stale(self, event_id, *args, **kwargs):
        raise StaleBooking(event_id)

    monkeypatch.setattr(OfferingStore, "update_event_listing", always_stale)
    assert cli.main(["reindex-search", "--table", TABLE, "--endpoint", ""]) == 1
    assert f"EVENT#{event_id} changed during every attempt" in capsys.readouterr().err
