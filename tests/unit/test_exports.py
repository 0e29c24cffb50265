"""The CSV exports (services/exports.py, domain/exports.py) on the in-memory table: exactly the
confirmed orders of the organizer's own offerings, a refund asked, pages that follow one another
by a cursor bound to the filters, time windows, and one file format (BOM, header row, CRLF,
quoting, ISO times, amounts with two decimals)."""
from __future__ import annotations

import csv
import io

import pytest

from holdfast.domain import exports
from holdfast.domain.errors import InvalidRequest, NotFound
from holdfast.domain.organizers import Caller
from holdfast.schemas import BookingIn
from holdfast.services.exports import ExportService
from tests.support.fake_table import FakeTableStore
from tests.support.fakes import always
from tests.unit.conftest import event_request

ACME = Caller("org-acme", "key_acme1")
OTHER = Caller("org-other", "key_other1")


@pytest.fixture
def store():
    return FakeTableStore()


def parsed(page: dict) -> list[dict[str, str]]:
    assert page["text"].startswith(exports.BOM)
    rows = list(csv.DictReader(io.StringIO(page["text"].removeprefix(exports.BOM), newline="")))
    assert len(rows) == page["rows"]
    return rows


def confirmed(bookings, payments, provider, event_id: str, who: str, quantity: int = 1) -> str:
    booking = bookings.create_booking(event_id, who, f"{who}-1", BookingIn(quantity=quantity)).booking
    payment_id = payments.start_payment(booking.booking_id, who, f"{who}-p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert bookings.store.get_booking(booking.booking_id).status.value == "CONFIRMED"
    return booking.booking_id


def test_sales_list_exactly_the_confirmed_orders_of_the_organizers_own_offerings(catalog, bookings, payments, provider,
                                                                                 store, clock):
    mine = catalog.create_event(event_request(name="Вечер, джаз \"live\""), None, ACME)
    theirs = catalog.create_event(event_request(name="Theirs"), None, OTHER)
    paid = [confirmed(bookings, payments, provider, mine["event_id"], who, 2) for who in ("alice", "bob")]
    bookings.create_booking(mine["event_id"], "carol", "carol-1", BookingIn(quantity=1))   # held, never paid
    confirmed(bookings, payments, provider, theirs["event_id"], "dave")
    service = ExportService(store)

    page = service.page(ACME, "sales")
    rows = parsed(page)
    assert sorted(row["booking_id"] for row in rows) == sorted(paid)
    assert {row["offering_name"] for row in rows} == {"Вечер, джаз \"live\""}      # quoted, and read back whole
    assert {(row["quantity"], row["amount"], row["currency"]) for row in rows} == {("2", "3000.00", "RUB")}
    assert all(len(row["confirmed_at"]) == 20 and row["confirmed_at"].endswith("Z") for row in rows)
    assert page["text"].split("\r\n")[0] == exports.BOM + ",".join(exports.COLUMNS["sales"])
    assert page["next_cursor"] is None
    assert [row["booking_id"] for row in parsed(service.page(OTHER, "sales"))] != paid
    attendees = parsed(service.page(ACME, "attendees"))
    assert sorted((row["booking_id"], row["place"]) for row in attendees) == sorted(
        (booking_id, place) for booking_id in paid for place in ("1", "2"))
    # a key limited to another offering sees none of these, and naming this one is its 404
    limited = Caller("org-acme", "key_acme2", offerings=frozenset({"elsewhere"}))
    assert parsed(service.page(limited, "sales")) == []
    with pytest.raises(NotFound) as hidden:
        service.page(limited, "sales", offering=mine["event_id"])
    assert hidden.value.code == "offering_not_found"


def test_pages_follow_one_another_by_a_cursor_bound_to_the_filters(catalog, bookings, payments, provider, store, clock):
    event = catalog.create_event(event_request(), None, ACME)
    paid = [confirmed(bookings, payments, provider, event["event_id"], f"c{n}") for n in range(3)]
    service = ExportService(store)
    seen, cursor = [], None
    for _ in range(5):
        page = service.page(ACME, "sales", cursor=cursor, limit=1)
        seen += [row["booking_id"] for row in parsed(page)]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(paid) and len(seen) == 3
    first = service.page(ACME, "sales", limit=1)["next_cursor"]
    for call in (lambda: service.page(ACME, "sales", offering=event["event_id"], cursor=first),
                 lambda: service.page(OTHER, "sales", cursor=first),
                 lambda: service.page(ACME, "refunds", cursor=first)):
        with pytest.raises(InvalidRequest) as refused:
            call()
        assert refused.value.code == "invalid_cursor"


def test_a_time_window_and_bad_requests(catalog, bookings, payments, provider, store, clock):
    event = catalog.create_event(event_request(), None, ACME)
    confirmed(bookings, payments, provider, event["event_id"], "alice")
    service = ExportService(store)
    today = clock().date().isoformat()
    assert len(parsed(service.page(ACME, "sales", since=today))) == 1
    assert parsed(service.page(ACME, "sales", until=today)) == []
    assert parsed(service.page(ACME, "sales", since="2999-01-01T00:00:00Z")) == []
    with pytest.raises(InvalidRequest) as bad:
        service.page(ACME, "sales", since="next tuesday")
    assert (bad.value.code, bad.value.details) == ("invalid_time", {"field": "from"})
    for edge in ("0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"):   # outside the calendar in UTC
        with pytest.raises(InvalidRequest) as bad:
            service.page(ACME, "sales", since=edge)
        assert bad.value.code == "invalid_time"
    with pytest.raises(NotFound) as missing:
        service.page(ACME, "tickets")
    assert missing.value.code == "export_not_found"


def test_a_refund_asked_is_a_row_of_the_refunds_export(catalog, bookings, payments, provider, reviews, store, clock):
    event = catalog.create_event(event_request(), None, ACME)
    booking_id = confirmed(bookings, payments, provider, event["event_id"], "alice")
    reviews.cancel(booking_id, "olga", "the customer asked", ACME)
    rows = parsed(ExportService(store).page(ACME, "refunds"))
    assert [(row["booking_id"], row["amount"], row["currency"]) for row in rows] == [(booking_id, "1500.00", "RUB")]
    assert rows[0]["status"] and rows[0]["requested_at"].endswith("Z")
    assert parsed(ExportService(store).page(ACME, "sales")) == []      # no longer a confirmed order


def test_the_format_is_one_for_every_export():
    assert exports.amount("1500") == "1500.00" and exports.amount(1.5) == "1.50"
    assert exports.moment("2026-12-07T11:00:00.123Z") == "2026-12-07T11:00:00Z" and exports.moment(None) == ""
    text = exports.page_text(("ticket_id", "door_id", "mode"), [{"ticket_id": "t1", "mode": None}])
    assert text == exports.BOM + "ticket_id,door_id,mode\r\nt1,,\r\n"


class CountingStore:
    """The store, counting what an export reads of it: offerings whole, bookings (each one read),
    and calls to each method."""

    def __init__(self, store) -> None:
        self.store = store
        self.calls: dict[str, int] = {}
        self.bookings_read = 0

    def __getattr__(self, name):
        method = getattr(self.store, name)

        def counted(*args, **kwargs):
            self.calls[name] = self.calls.get(name, 0) + 1
            if name == "get_bookings":
                self.bookings_read += len(args[0])
            return method(*args, **kwargs)

        return counted

    def reset(self) -> None:
        self.calls, self.bookings_read = {}, 0


def test_each_page_reads_only_about_what_it_shows_and_the_walk_lists_every_row_once(catalog, bookings, payments,
                                                                                   provider, store, clock):
    offerings = [catalog.create_event(event_request(name=f"Night {n}", capacity=20), None, ACME)["event_id"]
                 for n in range(4)]
    paid = {event_id: [confirmed(bookings, payments, provider, event_id, f"{event_id[:6]}-{n}", 2) for n in range(6)]
            for event_id in offerings}
    for event_id in offerings:   # a hold never paid: read, but no row
        bookings.create_booking(event_id, f"{event_id[:6]}-held", f"{event_id[:6]}-h", BookingIn(quantity=1))
    counting = CountingStore(store)
    service = ExportService(counting)
    every_booking = sum(len(ids) + 1 for ids in paid.values())   # 28
    for export, limit, expected in [
            ("sales", 5, sorted(b for ids in paid.values() for b in ids)),
            ("attendees", 3, sorted((b, str(p)) for ids in paid.values() for b in ids for p in (1, 2)))]:
        walked, cursor, per_page = [], None, []
        while True:
            counting.reset()
            page = service.page(ACME, export, cursor=cursor, limit=limit)
            rows = parsed(page)
            walked += [row["booking_id"] if export == "sales" else (row["booking_id"], row["place"]) for row in rows]
            per_page.append((counting.bookings_read, counting.calls.get("get_event", 0), dict(counting.calls)))
            cursor = page["next_cursor"]
            if cursor is None:
                break
        # each row exactly once, in the same order as the whole export (an export job's file)
        assert sorted(walked) == expected and len(walked) == len(set(walked))
        whole = service.whole(ACME, export)
        assert whole["rows"] == len(walked)
        assert len(per_page) == -(-len(expected) // limit)
        for bookings_read, offerings_read, calls in per_page:
            # a page reads at most its rows' bookings, one more to know a page follows, the booking
            # the last page stopped in, and the unpaid holds it passes (one an offering): never the
            # whole organizer's, as it did before the cursor named a place in an offering's index
            assert bookings_read <= limit + 2 + 2, (export, per_page)
            assert offerings_read <= 3, (export, per_page)   # the ones its rows are in, and the next
            assert "owned_offerings" not in calls and "event_booking_ids" not in calls
        # in all, every booking once and a page's worth of look-ahead a page: not pages x bookings
        # (the whole organizer's bookings on every page: 16 x 28 for the attendees at 3 a page)
        assert sum(read for read, _, _ in per_page) <= every_booking + len(per_page) * (limit + 2), per_page


def _placed(bookings, clock, event_id: str, who: str):
    clock.advance(60)
    return bookings.create_booking(event_id, who, f"{who}-1", BookingIn(quantity=1)).booking


def _pay(payments, provider, booking) -> str:
    payment_id = payments.start_payment(booking.booking_id, booking.customer_id, f"{booking.customer_id}-p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    return booking.booking_id


def test_an_offerings_sales_page_is_newest_first_and_its_cursor_neither_repeats_nor_skips(
        catalog, bookings, payments, provider, store, clock):
    """GET /admin/sales/{offering_id}: orders newest first by when they were placed (paid in
    another order), three pages of one; an order placed before the first page was read but paid
    after it comes on a later page, not on the first again; a held order is no sale."""
    event = catalog.create_event(event_request(), None, ACME)["event_id"]
    first, second, third, late = (_placed(bookings, clock, event, who) for who in ("ann", "ben", "cat", "dan"))
    for booking in (third, first, second):   # paid in another order than placed
        _pay(payments, provider, booking)
    service = ExportService(store)

    page = service.sales_of(ACME, event, limit=1)
    assert [sale["booking_id"] for sale in page["sales"]] == [third.booking_id]
    assert page["sales"][0]["created_at"] == third.created_at and page["next_cursor"]
    _pay(payments, provider, late)   # placed last, paid now: newer than every page still to read
    seen = [third.booking_id]
    cursor = page["next_cursor"]
    while cursor:
        page = service.sales_of(ACME, event, cursor=cursor, limit=1)
        seen += [sale["booking_id"] for sale in page["sales"]]
        cursor = page["next_cursor"]
    assert seen == [third.booking_id, second.booking_id, first.booking_id]
    whole = service.sales_of(ACME, event)
    assert [sale["booking_id"] for sale in whole["sales"]] == [
        late.booking_id, third.booking_id, second.booking_id, first.booking_id]
    assert [sale["created_at"] for sale in whole["sales"]] == sorted(
        (sale["created_at"] for sale in whole["sales"]), reverse=True)
    assert whole["next_cursor"] is None

    _placed(bookings, clock, event, "eve")   # held, never paid: not a sale
    assert [sale["booking_id"] for sale in service.sales_of(ACME, event, limit=2)["sales"]] == [
        late.booking_id, third.booking_id]
    with pytest.raises(InvalidRequest) as bad:
        service.sales_of(ACME, event, cursor=service.page(ACME, "sales", limit=1)["next_cursor"])
    assert bad.value.code == "invalid_cursor"


def test_a_sale_whose_index_entry_has_no_placing_time_is_listed_by_its_sales_key(catalog, bookings, payments,
                                                                                   provider, store, clock):
    """The sales index's key carries the placing time (written by the confirming write): an entry
    that lacks ``placed_at`` is still listed once, where its placing time puts it."""
    event = catalog.create_event(event_request(), None, ACME)["event_id"]
    old, new = (_pay(payments, provider, _placed(bookings, clock, event, who)) for who in ("old", "new"))
    for shard in range(16):
        item = store.table.get(f"EVENTBOOKINGS#{event}#{shard}", old)
        if item is not None:
            store.table.write((item["pk"], item["sk"]), always,
                              lambda found: {key: value for key, value in found.items() if key != "placed_at"})
    listed = ExportService(store).sales_of(ACME, event, limit=1)
    after = ExportService(store).sales_of(ACME, event, cursor=listed["next_cursor"], limit=1)
    assert [sale["booking_id"] for sale in listed["sales"] + after["sales"]] == [new, old]
