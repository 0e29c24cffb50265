"""Listing, search, edit and publish on moto (the listing's sort key ranges, which the in-memory
store has not); the seat map and best-available holds on the
in-memory store, and best-available under concurrency on moto."""
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from holdfast.adapters.dynamo import BookingStore
from holdfast.domain.errors import InvalidRequest, NotFound, SoldOut, TooBusy
from holdfast.schemas import BookingIn, EventListQuery, EventPatchIn
from holdfast.services.bookings import BookingService
from holdfast.services.listing import ListingService
from tests.unit.conftest import event_request, store_for

#: list_events reads with query_listing, which the fake has not.
LISTING = pytest.mark.on_moto("the listing's sort key ranges")


@pytest.fixture
def store(request, fake_store):
    return store_for(request, fake_store)


@pytest.fixture
def listing(store, clock):
    return ListingService(store, clock)


def make(catalog, listing, publish=True, **overrides):
    event = catalog.create_event(event_request(**overrides))
    if publish:
        listing.publish(event["event_id"])
    return event


def ids(answer):
    return [event["event_id"] for event in answer["events"]]


def q(**params):
    return EventListQuery.model_validate(params).search()


@LISTING
def test_only_published_events_are_listed(catalog, listing):
    draft = make(catalog, listing, publish=False)
    live = make(catalog, listing)
    assert ids(listing.list_events(q())) == [live["event_id"]]
    assert listing.publish(draft["event_id"])["published"] is True
    assert listing.publish(draft["event_id"])["published"] is True  # repeat changes nothing
    assert set(ids(listing.list_events(q()))) == {live["event_id"], draft["event_id"]}
    with pytest.raises(NotFound):
        listing.publish("missing")


@LISTING
def test_filters_city_category_dates(catalog, listing):
    a = make(catalog, listing, city="Moscow", category="club", starts_at="2030-02-01T20:00:00Z")
    b = make(catalog, listing, city="moscow", category="Theatre", starts_at="2030-03-01T20:00:00Z")
    c = make(catalog, listing, city="Kazan", category="club", starts_at="2030-04-01T20:00:00Z")
    make(catalog, listing, city="Kazan", category="club", starts_at="2029-12-01T20:00:00Z")  # in the past
    assert ids(listing.list_events(q())) == [a["event_id"], b["event_id"], c["event_id"]]
    assert ids(listing.list_events(q(city="MOSCOW"))) == [a["event_id"], b["event_id"]]
    assert ids(listing.list_events(q(category="club"))) == [a["event_id"], c["event_id"]]
    assert ids(listing.list_events(q(city="kazan", category="CLUB"))) == [c["event_id"]]
    assert ids(listing.list_events(q(**{"from": "2030-02-15T00:00:00Z", "to": "2030-03-31T00:00:00Z"}))) == [b["event_id"]]
    with pytest.raises(InvalidRequest):
        listing.list_events(q(**{"from": "2030-05-01T00:00:00Z", "to": "2030-04-01T00:00:00Z"}))


@LISTING
def test_text_search_words_case_insensitive_cyrillic(catalog, listing):
    rock = make(catalog, listing, name="Рок-концерт Ёлки", venue="Крокус Сити Холл")
    jazz = make(catalog, listing, name="Jazz Night", venue="Blue Hall", city="Kazan")
    assert ids(listing.list_events(q(q="ЕЛКИ"))) == [rock["event_id"]]
    assert ids(listing.list_events(q(q="крокус концерт"))) == [rock["event_id"]]
    assert ids(listing.list_events(q(q="hall"))) == [jazz["event_id"]]
    assert ids(listing.list_events(q(q="blue hall", city="kazan"))) == [jazz["event_id"]]
    assert ids(listing.list_events(q(q="blue hall", city="Moscow"))) == []
    assert ids(listing.list_events(q(q="опера"))) == []


@LISTING
def test_pagination_with_an_opaque_cursor(catalog, listing):
    made = [make(catalog, listing, starts_at=f"2030-02-{day:02d}T20:00:00Z")["event_id"] for day in range(1, 8)]
    seen, cursor = [], None
    for _ in range(10):
        page = listing.list_events(q(limit=3, **({"cursor": cursor} if cursor else {})))
        seen += ids(page)
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == made
    with pytest.raises(InvalidRequest) as caught:
        listing.list_events(q(cursor="bm9wZQ"))
    assert caught.value.code == "invalid_cursor"
    other = listing.list_events(q(limit=1))["next_cursor"]
    with pytest.raises(InvalidRequest):
        listing.list_events(q(city="Moscow", cursor=other))  # a cursor of another query


@LISTING
def test_patch_reindexes_published_events(catalog, listing, store):
    event = make(catalog, listing, name="Old name", city="Moscow")
    changed = listing.update(event["event_id"], EventPatchIn(name="Новое имя", city="Kazan").changes())
    assert changed["name"] == "Новое имя" and changed["city"] == "Kazan"
    assert ids(listing.list_events(q(q="old"))) == []
    assert ids(listing.list_events(q(city="Moscow"))) == []
    assert ids(listing.list_events(q(q="новое", city="kazan"))) == [event["event_id"]]
    assert catalog.get_event(event["event_id"])["name"] == "Новое имя"
    with pytest.raises(ValueError):
        EventPatchIn.model_validate({})


@LISTING
def test_patch_of_a_draft_writes_no_index(catalog, listing):
    event = make(catalog, listing, publish=False)
    listing.update(event["event_id"], EventPatchIn(name="Renamed").changes())
    assert listing.list_events(q())["events"] == []
    listing.publish(event["event_id"])
    assert listing.list_events(q(q="renamed"))["events"][0]["name"] == "Renamed"


def test_seat_map_states(catalog, listing, bookings, seated_event):
    event_id = seated_event["event_id"]
    bookings.create_booking(event_id, "c1", "k1", BookingIn(seats=["A-1"]))
    answer = listing.seat_map(event_id)
    assert answer["counts"] == {"available": 3, "held": 1, "sold": 0}
    assert answer["seats"][0] == {"seat": "A-1", "state": "held"}
    assert all(set(seat) == {"seat", "state"} for seat in answer["seats"])
    with pytest.raises(InvalidRequest):
        listing.seat_map(catalog.create_event(event_request())["event_id"])


def test_best_available_holds_adjacent_seats(catalog, bookings):
    event = catalog.create_event(event_request(capacity=None, seat_map={"rows": [{"name": "A", "seats": 5},
                                                                                  {"name": "B", "seats": 5}]}))
    first = bookings.create_booking(event["event_id"], "c1", "k1", BookingIn(quantity=3, best_available=True)).booking
    assert first.places.units == ("A-1", "A-2", "A-3")  # A-2..A-4 would strand
    second = bookings.create_booking(event["event_id"], "c2", "k2", BookingIn(quantity=2, best_available=True)).booking
    assert second.places.units == ("A-4", "A-5")
    with pytest.raises(SoldOut):
        bookings.create_booking(event["event_id"], "c3", "k3", BookingIn(quantity=6, best_available=True))
    with pytest.raises(ValueError):
        BookingIn.model_validate({"seats": ["A-1"], "best_available": True})


class SerialClient:
    """Each DynamoDB call atomic (as in DynamoDB), threads interleaving between calls."""

    def __init__(self, client):
        self._client, self._lock = client, threading.Lock()

    def __getattr__(self, name):
        method = getattr(self._client, name)

        def call(*args, **kwargs):
            with self._lock:
                return method(*args, **kwargs)
        return call


@pytest.mark.on_moto("a race: threads interleaving DynamoDB calls")
def test_best_available_under_concurrency_never_double_sells(catalog, store, clock):
    """20 customers ask for 2 best-available seats of 30 at once (8 threads). A hold that loses its
    seats to a concurrent one chooses again; one that loses every attempt answers TooBusy (429, retry
    after a second, nothing reserved), which a client retries with the same key, as told. Sold out
    is answered only once fewer than 2 seats are left (a pair that finds no two adjacent seats gets
    two apart), so every seat is sold: 15 holds, 5 sold out, no seat in two of them."""
    event = catalog.create_event(event_request(capacity=None, seat_map={"rows": [{"name": r, "seats": 10} for r in "ABC"]}))
    shared = BookingStore(store.table, SerialClient(store.client))
    service = BookingService(shared, clock, None, rng=random.Random(1))
    busy = []

    def attempt(i):
        for _ in range(5):
            try:
                return service.create_booking(event["event_id"], f"c{i}", f"k{i}", BookingIn(quantity=2, best_available=True)).booking
            except SoldOut as exc:
                return exc
            except TooBusy as exc:
                assert exc.status == 429 and exc.details["retry_after"] == 1   # retryable: nothing was reserved
                busy.append(i)
        raise AssertionError(f"c{i} was told to retry five times")
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(attempt, range(20)))
    results = [answer for answer in answers if not isinstance(answer, SoldOut)]
    refused = [answer for answer in answers if isinstance(answer, SoldOut)]
    seats = [seat for booking in results for seat in booking.places.units]
    assert all(len(booking.places.units) == 2 for booking in results)
    assert len(seats) == len(set(seats)), "a seat held twice"
    assert len(results) == 15 and len(refused) == 5 and len(seats) == 30, (len(results), len(refused), busy)
    assert all(answer.details["available"] < 2 for answer in refused)
    states = store.seat_states(event["event_id"])
    assert sorted(s for s, st in states.items() if st == "held") == sorted(seats)   # each in exactly one booking
