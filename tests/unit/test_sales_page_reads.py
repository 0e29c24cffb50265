"""The operator's sales page (GET /admin/sales/{offering_id}) reads a page's worth of its
offering's index, not the whole of it: on moto's DynamoDB, every Query answer's items counted."""
from __future__ import annotations

from holdfast.domain.organizers import Caller
from holdfast.schemas import BookingIn
from holdfast.services.exports import ExportService

from .conftest import event_request

ACME = Caller("org-acme", "key_acme1")


def test_a_sales_page_reads_the_index_entries_of_a_page_not_every_hold_ever_made(
        catalog, bookings, payments, provider, store, clock, monkeypatch):
    """Forty holds that were never paid and three sales: a page of two reads at most three index
    entries (the page and one more, to know a next page follows), and the next page the rest; the
    unpaid holds are never read, however many an offering collects."""
    event = catalog.create_event(event_request(capacity=100, max_holds_per_customer=50), None, ACME)["event_id"]
    for n in range(40):
        bookings.create_booking(event, f"c{n}", f"k{n}", BookingIn(quantity=1))
    sold = []
    for who in ("ann", "ben", "cat"):
        clock.advance(1)   # placed one after another: the page's order
        booking = bookings.create_booking(event, who, f"{who}-1", BookingIn(quantity=1)).booking
        payment_id = payments.start_payment(booking.booking_id, who, f"{who}-p").payment.payment_id
        provider.pay(payment_id)
        payments.apply_provider_payment(provider.get_payment(payment_id))
        sold.append(booking.booking_id)

    read: list[int] = []
    client = store.client
    original = client.query

    def counted(**request):
        answer = original(**request)
        partition = str(request.get("ExpressionAttributeValues", {}).get(":pk", {}).get("S", ""))
        if partition.startswith(("EVENTBOOKINGS#", "SOLD#")):   # the offering's booking index, either way
            read.append(len(answer.get("Items", [])))
        return answer

    monkeypatch.setattr(client, "query", counted)
    service = ExportService(store)
    first = service.sales_of(ACME, event, limit=2)
    assert [sale["booking_id"] for sale in first["sales"]] == sold[::-1][:2] and first["next_cursor"]
    assert sum(read) <= 3, f"the page read {sum(read)} index entries"
    read.clear()
    rest = service.sales_of(ACME, event, cursor=first["next_cursor"], limit=2)
    assert [sale["booking_id"] for sale in rest["sales"]] == sold[:1] and rest["next_cursor"] is None
    assert sum(read) <= 1


def test_a_sale_exchanged_away_before_the_exchange_took_its_mark_off_is_not_on_the_old_page(
        catalog, bookings, payments, provider, store, clock):
    """An exchange made before its write took the old offering's sales mark off left that mark:
    the page reads the booking and, no longer of this offering, skips it (the new offering's page
    lists it)."""
    from holdfast.adapters.cancellation_store import event_index_put
    from holdfast.domain.commands import HoldPlaces
    from holdfast.services.exchange import ExchangeService

    first = catalog.create_event(event_request(exchange_until_hours=24), None, ACME)["event_id"]
    second = catalog.create_event(event_request(starts_at="2030-02-08T20:00:00Z", exchange_until_hours=24),
                                  None, ACME)["event_id"]
    booking = bookings.create_booking(first, "ann", "ann-1", BookingIn(quantity=1)).booking
    payment_id = payments.start_payment(booking.booking_id, "ann", "ann-p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    ExchangeService(store, clock).exchange(booking.booking_id, "ann", "x-1", second, HoldPlaces(quantity=1))
    _, put = event_index_put(store.db.table, first, booking.booking_id, booking.created_at, sold=True)
    store.client.put_item(**put["Put"])          # the mark as an exchange left it before its write took it off
    service = ExportService(store)
    assert service.sales_of(ACME, first)["sales"] == []
    assert [sale["booking_id"] for sale in service.sales_of(ACME, second)["sales"]] == [booking.booking_id]
