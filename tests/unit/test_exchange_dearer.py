"""Exchange into dearer places (issue 45): the difference is paid through a second provider
payment. The new places are held for it (the target's hold time) while the old stay the
booking's; paid, the swap is made in one write; cancelled or lapsed, the held places go back and
the booking is as it was; paid late, the places are taken again if free, else the difference is
refunded; a lost answer to its creation is found again under the same key (one payment)."""
from __future__ import annotations

from decimal import Decimal

import pytest

from holdfast.clock import iso
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import Conflict, PaymentProviderUnavailable
from holdfast.domain.fiscal import FiscalSettings
from holdfast.domain.money import Money
from holdfast.domain.organizers import Caller
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.booking_views import describe
from holdfast.services.exchange import ExchangeService
from holdfast.services.payments import PaymentService
from tests.support.fake_organizers import FakeOrganizerDirectory
from tests.unit.conftest import event_request

ORG = Caller("org-xd", "key-1")
RUB = "RUB"


@pytest.fixture
def store(fake_store):
    return fake_store


@pytest.fixture
def directory(fake_store):
    return FakeOrganizerDirectory(fake_store.table)


@pytest.fixture
def paying(store, provider, clock, bookings, directory):
    return PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)


@pytest.fixture
def exchanges(store, clock, paying):
    return ExchangeService(store, clock, money=paying.money, differences=paying.differences)


@pytest.fixture
def dates(catalog):
    """One show on two dates of one organizer: 1000.00 a place, and 1500.00 the week after."""
    cheap = catalog.create_event(event_request(exchange_until_hours=24, capacity=2,
                                               price={"value": "1000.00", "currency": RUB}), "ev-cheap", ORG)
    dear = catalog.create_event(event_request(starts_at="2030-02-08T20:00:00Z", exchange_until_hours=24, capacity=2),
                                "ev-dear", ORG)
    return cheap["event_id"], dear["event_id"]


def _paid(bookings, paying, provider, event_id, n=2, who="alice"):
    booking = bookings.create_booking(event_id, who, f"hold-{who}",
                                      BookingIn(quantity=n, contact_email=f"{who}@example.com")).booking
    started = paying.start_payment(booking.booking_id, who, f"pay-{who}")
    provider.pay(started.payment.payment_id)
    paying.apply_provider_payment(provider.get_payment(started.payment.payment_id))
    paid = paying.store.get_booking(booking.booking_id)
    assert paid.status is BookingStatus.CONFIRMED
    return paid


def _counts(catalog, *event_ids):
    return [{k: catalog.get_event(e)["counts"][k] for k in ("held", "sold")} for e in event_ids]


def _difference_payments(provider, booking_id):
    return [p for p in provider.payments.values() if (p.get("metadata") or {}).get("exchange_of") == booking_id]


def test_a_paid_difference_swaps_the_places_in_one_write_and_the_view_lists_both_payments(
        bookings, paying, provider, exchanges, dates, store, catalog):
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap)
    held = exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    # the old places stay the booking's, the new ones are held for it
    assert (held.status, held.event_id, held.amount) == (BookingStatus.CONFIRMED, cheap, Money.parse("2000.00", RUB))
    assert _counts(catalog, cheap, dear) == [{"held": 0, "sold": 2}, {"held": 2, "sold": 0}]
    view = describe(held)
    assert view["exchange_difference"]["amount"] == {"value": "1000.00", "currency": RUB}
    assert view["exchange_difference"]["confirmation_url"].startswith("http://sandbox.invalid/")
    assert view["exchange_difference"]["expires_at"] == held.held_difference["expires_at"]
    # the same request again: the same hold and the one payment
    again = exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    assert again.version == held.version and len(_difference_payments(provider, booking.booking_id)) == 1
    with pytest.raises(Conflict) as pending:
        exchanges.exchange(booking.booking_id, "alice", "x-2", cheap, HoldPlaces(quantity=1))
    assert pending.value.code == "exchange_pending"

    [payment] = _difference_payments(provider, booking.booking_id)
    assert payment["amount"] == {"value": "1000.00", "currency": RUB} and payment["capture"] is True
    provider.pay(payment["id"])
    assert paying.apply_provider_payment(provider.get_payment(payment["id"])) == "exchanged"
    moved = store.get_booking(booking.booking_id)
    assert (moved.status, moved.event_id, moved.amount) == (BookingStatus.CONFIRMED, dear, Money.parse("3000.00", RUB))
    assert moved.charged == Money.parse("2000.00", RUB)   # what the first payment took
    assert _counts(catalog, cheap, dear) == [{"held": 0, "sold": 0}, {"held": 0, "sold": 2}]
    assert moved.held_difference is None
    payments = describe(moved)["payments"]
    assert [(p["purpose"], p["amount"]["value"], p["status"]) for p in payments] == [
        ("booking", "2000.00", "succeeded"), ("exchange_difference", "1000.00", "succeeded")]
    # its notification delivered again changes nothing
    assert paying.apply_provider_payment(provider.get_payment(payment["id"])) == "difference_succeeded"
    assert store.get_booking(booking.booking_id).version == moved.version
    # the repeat of the exchange request answers the booking as it is, with no new payment
    assert exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2)).event_id == dear
    assert len(_difference_payments(provider, booking.booking_id)) == 1


def test_a_cancelled_or_lapsed_difference_leaves_the_booking_as_it_was(
        bookings, paying, provider, exchanges, dates, store, catalog, clock):
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap)
    held = exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    [payment] = _difference_payments(provider, booking.booking_id)
    provider.decline(payment["id"])
    assert paying.apply_provider_payment(provider.get_payment(payment["id"])) == "difference_failed"
    failed = store.get_booking(booking.booking_id)
    assert (failed.event_id, failed.places, failed.amount) == (held.event_id, held.places, held.amount)
    assert _counts(catalog, cheap, dear) == [{"held": 0, "sold": 2}, {"held": 0, "sold": 0}]
    # lapsed: the sweeper releases the held places at the deadline, not before
    exchanges.exchange(booking.booking_id, "alice", "x-2", dear, HoldPlaces(quantity=2))
    entry = store.get_booking(booking.booking_id).held_difference
    assert not paying.differences.due(store.get_booking(booking.booking_id), entry["created_at"])
    clock.advance(601)
    overdue = iso(clock())
    assert paying.differences.due(store.get_booking(booking.booking_id), overdue)
    assert paying.differences.sweep(store.get_booking(booking.booking_id), overdue) == "difference_lapsed"
    lapsed = store.get_booking(booking.booking_id)
    assert lapsed.held_difference is None and lapsed.event_id == cheap and lapsed.status is BookingStatus.CONFIRMED
    assert _counts(catalog, cheap, dear) == [{"held": 0, "sold": 2}, {"held": 0, "sold": 0}]


def test_a_late_difference_takes_the_places_again_if_free_else_it_is_refunded(
        bookings, paying, provider, exchanges, dates, store, catalog, clock):
    cheap, dear = dates
    first = _paid(bookings, paying, provider, cheap, n=1, who="alice")
    second = _paid(bookings, paying, provider, cheap, n=1, who="bob")
    exchanges.exchange(first.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=1))
    exchanges.exchange(second.booking_id, "bob", "x-1", dear, HoldPlaces(quantity=1))
    clock.advance(601)
    for booking in (first, second):
        paying.differences.sweep(store.get_booking(booking.booking_id), iso(clock()))
    assert _counts(catalog, cheap, dear) == [{"held": 0, "sold": 2}, {"held": 0, "sold": 0}]
    # alice pays late, with her place still free: the exchange is made
    [late] = _difference_payments(provider, first.booking_id)
    provider.pay(late["id"])
    assert paying.apply_provider_payment(provider.get_payment(late["id"])) == "exchanged_late"
    assert store.get_booking(first.booking_id).event_id == dear
    # bob's place went to someone else meanwhile: his difference comes back, his booking stays
    _paid(bookings, paying, provider, dear, n=1, who="carol")
    [gone] = _difference_payments(provider, second.booking_id)
    provider.pay(gone["id"])
    assert paying.apply_provider_payment(provider.get_payment(gone["id"])) == "difference_refunded"
    kept = store.get_booking(second.booking_id)
    assert kept.event_id == cheap and kept.differences[-1]["state"] == "refunded"
    assert [Decimal(r["amount"]["value"]) for r in provider.refunds_for(gone["id"])] == [Decimal("500.00")]
    assert _counts(catalog, cheap, dear) == [{"held": 0, "sold": 1}, {"held": 0, "sold": 2}]
    # told again: still the one refund
    assert paying.apply_provider_payment(provider.get_payment(gone["id"])) == "difference_succeeded"
    assert len(provider.refunds_for(gone["id"])) == 1


def test_a_lost_creation_answer_is_found_again_under_the_same_key(
        bookings, paying, provider, exchanges, dates, store, clock, directory):
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap)
    provider.fail("create_payment", "after")   # made at the provider, its answer lost
    with pytest.raises(PaymentProviderUnavailable):
        exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    unknown = store.get_booking(booking.booking_id)
    assert unknown.held_difference["payment"]["state"] == "UNKNOWN"
    assert describe(unknown)["exchange_difference"]["payment_status"] == "unknown"
    # reconciliation, on its check: the same key answers the one payment, which it then follows
    clock.advance(31)
    assert paying.differences.due(unknown, iso(clock()))
    paying.differences.sweep(unknown, iso(clock()))
    [payment] = _difference_payments(provider, booking.booking_id)
    found = store.get_booking(booking.booking_id)
    assert found.held_difference["payment"]["payment_id"] == payment["id"]
    # its receipt: the difference, to the booking's address
    assert payment["receipt"]["customer"] == {"email": "alice@example.com"}
    assert sum(Decimal(i["amount"]["value"]) * Decimal(str(i["quantity"])) for i in payment["receipt"]["items"]) \
        == Decimal("1000.00")
    provider.pay(payment["id"])
    clock.advance(120)
    paying.differences.sweep(store.get_booking(booking.booking_id), iso(clock()))   # the webhook never came
    assert store.get_booking(booking.booking_id).event_id == dear


def test_a_booking_cancelled_while_its_difference_is_held_gets_the_difference_back(
        bookings, paying, provider, exchanges, dates, store, catalog):
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap)
    exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    paying.cancel_confirmed(store.get_booking(booking.booking_id))
    # the places held for the exchange go back with the cancel, not at the deadline
    assert _counts(catalog, cheap, dear) == [{"held": 0, "sold": 0}, {"held": 0, "sold": 0}]
    assert store.get_booking(booking.booking_id).differences[-1]["state"] == "failed"
    [payment] = _difference_payments(provider, booking.booking_id)
    provider.pay(payment["id"])
    assert paying.apply_provider_payment(provider.get_payment(payment["id"])) == "difference_refunded"
    assert _counts(catalog, cheap, dear) == [{"held": 0, "sold": 0}, {"held": 0, "sold": 0}]
    assert [r["amount"]["value"] for r in provider.refunds_for(payment["id"])] == ["1000.00"]


def test_a_cancel_after_a_paid_difference_gives_each_payment_back_what_it_took(
        bookings, paying, provider, exchanges, dates, store):
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap)
    exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    [payment] = _difference_payments(provider, booking.booking_id)
    provider.pay(payment["id"])
    paying.apply_provider_payment(provider.get_payment(payment["id"]))
    paying.cancel_confirmed(store.get_booking(booking.booking_id))
    assert [r["amount"]["value"] for r in provider.refunds_for(booking.payment.payment_id)] == ["2000.00"]
    assert [r["amount"]["value"] for r in provider.refunds_for(payment["id"])] == ["1000.00"]
    done = store.get_booking(booking.booking_id)
    assert done.status is BookingStatus.REFUNDED and done.differences[-1]["state"] == "refunded"


def _moved_dearer_with_receipts(bookings, paying, provider, exchanges, dates, directory):
    """Receipts on; alice's two places of the cheaper date exchanged into the dearer one, the
    difference paid: the booking as it was before the exchange."""
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap)
    exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    [payment] = _difference_payments(provider, booking.booking_id)
    provider.pay(payment["id"])
    paying.apply_provider_payment(provider.get_payment(payment["id"]))
    return booking


def test_with_receipts_on_the_view_lists_the_difference_payments_receipt(
        bookings, paying, provider, exchanges, dates, store, directory):
    booking = _moved_dearer_with_receipts(bookings, paying, provider, exchanges, dates, directory)
    receipts = [(r["type"], r["amount"]["value"]) for r in describe(store.get_booking(booking.booking_id))["receipts"]]
    assert ("payment", "2000.00") in receipts and ("payment", "1000.00") in receipts


def test_a_booking_whose_difference_waits_cannot_be_given_away(bookings, paying, provider, exchanges, dates, store):
    from urllib.parse import parse_qs, urlsplit

    from holdfast.services.transfers import TransferService

    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap)
    transfers = TransferService(store, paying.clock, accept_url="http://127.0.0.1/bookings/{booking_id}/accept")
    offered = transfers.offer(booking.booking_id, "alice", "friend@example.org")   # offered before
    exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    before = store.get_booking(booking.booking_id)
    with pytest.raises(Conflict) as refused:
        transfers.offer(booking.booking_id, "alice", "other@example.org")
    assert refused.value.code in ("exchange_pending", "transfer_pending")
    token = parse_qs(urlsplit(offered["accept_url"]).query)["token"][0]
    with pytest.raises(Conflict) as taken:
        transfers.accept(booking.booking_id, token, "bob", "bob@example.org")
    assert taken.value.code == "exchange_pending" and store.get_booking(booking.booking_id) == before


def test_a_cheaper_exchange_after_a_dearer_one_refunds_the_difference_payment_first_then_the_first(
        bookings, paying, provider, exchanges, dates, store, directory):
    """A booking paid by two payments (2000.00, then a difference of 1000.00) moved to one place of
    the cheap date (1000.00): 2000.00 back, once refused with 409 because the first payment held
    less than that. Now the difference payment gives back what it holds and the first the rest,
    each refund against its own payment under its own key, with its own receipt; a lost answer
    and the repeat make one refund of each; a cancel afterwards gives back what each still holds."""
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    cheap, dear = dates
    booking = _moved_dearer_with_receipts(bookings, paying, provider, exchanges, dates, directory)
    first = booking.payment.payment_id
    [difference] = _difference_payments(provider, booking.booking_id)
    provider.fail("create_refund", "after")   # the first refund is made, its answer lost
    with pytest.raises(PaymentProviderUnavailable):
        exchanges.exchange(booking.booking_id, "alice", "x-2", cheap, HoldPlaces(quantity=1))
    moved = exchanges.exchange(booking.booking_id, "alice", "x-2", cheap, HoldPlaces(quantity=1))
    exchanges.exchange(booking.booking_id, "alice", "x-2", cheap, HoldPlaces(quantity=1))   # again: nothing more
    assert (moved.event_id, moved.amount.text, moved.places.quantity) == (cheap, "1000.00", 1)
    assert [r["amount"]["value"] for r in provider.refunds_for(difference["id"])] == ["1000.00"]
    assert [r["amount"]["value"] for r in provider.refunds_for(first)] == ["1000.00"]
    assert [(e["payment_id"], e["status"]) for e in moved.payment.exchange_refunds] == [
        (difference["id"], "succeeded"), (first, "succeeded")]
    [back] = provider.refunds_for(difference["id"])
    assert sum(Decimal(i["amount"]["value"]) * Decimal(i["quantity"]) for i in back["receipt"]["items"]) \
        == Decimal("1000.00") and back["receipt"]["customer"] == {"email": "alice@example.com"}
    # what each payment holds now: the first 1000.00 of its 2000.00, the difference nothing
    assert (moved.first_payment_share.text, moved.paid_by_differences.text, moved.charged.text) == \
        ("1000.00", "0.00", "2000.00")
    assert paying.apply_provider_payment(provider.get_payment(difference["id"])) == "difference_succeeded"
    assert paying.refunds.apply_provider_refund(back) == "exchange_refund_succeeded"
    # cancelled: what is left goes back, of the first payment alone, once each
    done = paying.cancel_confirmed(store.get_booking(booking.booking_id))
    assert done.status is BookingStatus.REFUNDED
    assert [r["amount"]["value"] for r in provider.refunds_for(first)] == ["1000.00", "1000.00"]
    assert [r["amount"]["value"] for r in provider.refunds_for(difference["id"])] == ["1000.00"]


def test_a_cancel_after_a_dearer_and_a_cheaper_exchange_gives_each_payment_back_what_it_still_holds(
        bookings, paying, provider, exchanges, dates, store):
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap, n=1)   # 1000.00
    exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))   # 3000.00: 2000.00 more
    [difference] = _difference_payments(provider, booking.booking_id)
    provider.pay(difference["id"])
    paying.apply_provider_payment(provider.get_payment(difference["id"]))
    # two places of the cheap date (2000.00): 1000.00 back, from the difference payment, which keeps 1000.00
    moved = exchanges.exchange(booking.booking_id, "alice", "x-2", cheap, HoldPlaces(quantity=2))
    assert moved.amount.text == "2000.00" and moved.paid_by_differences.text == "1000.00"
    assert [r["amount"]["value"] for r in provider.refunds_for(difference["id"])] == ["1000.00"]
    assert provider.refunds_for(booking.payment.payment_id) == []
    done = paying.cancel_confirmed(store.get_booking(booking.booking_id))
    assert done.status is BookingStatus.REFUNDED and done.differences[-1]["state"] == "refunded"
    # each payment, in all, gave back exactly what it took, the cancel what each still held
    assert [r["amount"]["value"] for r in provider.refunds_for(booking.payment.payment_id)] == ["1000.00"]
    assert [r["amount"]["value"] for r in provider.refunds_for(difference["id"])] == ["1000.00", "1000.00"]


def _settled_after_start(store, provider, clock, booking_id, starts_at):
    """The settlement receipts the sweeper's settlement sends once the booking's event has begun,
    by the payment each closes."""
    from holdfast.clock import parse_iso
    from holdfast.services.settlements import Settlements

    clock.advance((parse_iso(starts_at) - clock()).total_seconds() + 1)
    assert Settlements(store, provider, clock).settle(store.get_booking(booking_id)) == "sent"
    return {made["payment_id"]: made for made in provider.receipts.values()}


def test_a_dearer_exchange_s_settlement_receipt_closes_what_the_first_payment_prepaid(
        bookings, paying, provider, exchanges, dates, store, directory, clock):
    """Seen by make proof (seed 20261208546): the settlement took the booking's new price (3000.00)
    against the first payment's receipt (2000.00) and raised on every sweep. The first payment
    closes its own share; the difference was a prepayment of its own."""
    booking = _moved_dearer_with_receipts(bookings, paying, provider, exchanges, dates, directory)
    assert store.get_booking(booking.booking_id).amount.text == "3000.00"
    made = _settled_after_start(store, provider, clock, booking.booking_id, "2030-02-08T20:00:00Z")[
        booking.payment.payment_id]
    assert made["payment_id"] == booking.payment.payment_id
    assert made["settlements"] == [{"type": "prepayment", "amount": {"value": "2000.00", "currency": RUB}}]
    assert sum(Decimal(i["amount"]["value"]) * Decimal(i["quantity"]) for i in made["items"]) == Decimal("2000.00")


def test_each_payment_of_a_dearer_exchange_has_its_prepayment_settled_once(
        bookings, paying, provider, exchanges, dates, store, directory, clock):
    """54-FZ (issue 44 with 45): once the service is rendered, the difference payment's prepayment
    (1000.00) is closed by a settlement receipt of its own, as the first payment's (2000.00) is, each
    exactly once: a lost answer is sent again under the same key, a later sweep sends nothing more.
    Before, the difference payment's was never sent."""
    from holdfast.clock import parse_iso
    from holdfast.services.settlements import Settlements

    booking = _moved_dearer_with_receipts(bookings, paying, provider, exchanges, dates, directory)
    [difference] = _difference_payments(provider, booking.booking_id)
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    assert [(r["type"], r["status"], r["amount"]["value"], r.get("payment_id"))
            for r in describe(store.get_booking(booking.booking_id))["receipts"] if r["type"] == "settlement"] == [
        ("settlement", "due", "2000.00", None), ("settlement", "due", "1000.00", difference["id"])]
    clock.advance((parse_iso("2030-02-08T20:00:00Z") - clock()).total_seconds() + 1)
    provider.fail("create_receipt", "none", "after")   # the first payment's goes; the difference's answer is lost
    assert settlements.settle(store.get_booking(booking.booking_id)) == "sent"
    clock.advance(25)
    waiting = store.get_booking(booking.booking_id)
    assert waiting.settlement_due is not None and parse_iso(waiting.settlement_due) <= clock()
    assert settlements.settle(waiting) == "sent"
    for _ in range(2):   # nothing more is owed
        clock.advance(3600)
        assert store.get_booking(booking.booking_id).settlement_due is None
        settlements.settle(store.get_booking(booking.booking_id))
    made = {}
    for receipt in provider.receipts.values():
        made.setdefault(receipt["payment_id"], []).append(receipt)
    assert sorted(made) == sorted([booking.payment.payment_id, difference["id"]])
    [closing] = made[difference["id"]]
    assert closing["settlements"] == [{"type": "prepayment", "amount": {"value": "1000.00", "currency": RUB}}]
    assert [(i["amount"]["value"], i["quantity"], i["payment_mode"]) for i in closing["items"]] == [
        ("1000.00", "1", "full_payment")] and closing["customer"] == {"email": "alice@example.com"}
    assert len(made[booking.payment.payment_id]) == 1
    shown = [(r["status"], r["amount"]["value"], r.get("payment_id"))
             for r in describe(store.get_booking(booking.booking_id))["receipts"] if r["type"] == "settlement"]
    assert shown == [("sent", "2000.00", None), ("sent", "1000.00", difference["id"])]


def test_a_cheaper_exchange_s_settlement_receipt_lists_the_places_it_now_has(
        bookings, paying, provider, exchanges, dates, store, directory, clock):
    """Seen by make proof (seed 20261208786): after an exchange into cheaper places the sale's items
    (2 x 1500.00) no longer add up to the booking's price (2 x 1000.00), and the settlement raised.
    It closes the price as it stands, one line of the places, taxed as the sale's first line."""
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, dear)
    exchanges.exchange(booking.booking_id, "alice", "x-1", cheap, HoldPlaces(quantity=2))
    moved = store.get_booking(booking.booking_id)
    assert moved.event_id == cheap and moved.amount.text == "2000.00"
    [made] = _settled_after_start(store, provider, clock, booking.booking_id, "2030-02-01T20:00:00Z").values()
    assert made["settlements"] == [{"type": "prepayment", "amount": {"value": "2000.00", "currency": RUB}}]
    assert [(i["quantity"], i["amount"]["value"], i["payment_mode"]) for i in made["items"]] == \
        [("2", "1000.00", "full_payment")]


def test_an_event_cancelled_after_a_dearer_and_a_cheaper_exchange_refunds_each_payment_what_it_holds(
        bookings, paying, provider, exchanges, dates, store, clock):
    """The event cancellation's whole refund (no amount stored) of a booking paid by two payments,
    a part of each already given back: each payment gives back what it still holds, once, however
    often the job's step is repeated."""
    from holdfast.services.cancellation_job import CancellationJob

    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap, n=1)   # 1000.00
    exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))   # 3000.00
    [difference] = _difference_payments(provider, booking.booking_id)
    provider.pay(difference["id"])
    paying.apply_provider_payment(provider.get_payment(difference["id"]))
    exchanges.exchange(booking.booking_id, "alice", "x-2", cheap, HoldPlaces(quantity=2))   # 2000.00: 1000.00 back
    job = CancellationJob(store, paying, clock, page_size=3)
    for _ in range(3):   # the state machine's retries of the same step
        job.settle(cheap, booking.booking_id, "storm")
    done = store.get_booking(booking.booking_id)
    assert done.status is BookingStatus.REFUNDED
    assert [r["amount"]["value"] for r in provider.refunds_for(booking.payment.payment_id)] == ["1000.00"]
    assert [r["amount"]["value"] for r in provider.refunds_for(difference["id"])] == ["1000.00", "1000.00"]


def test_a_held_difference_of_a_booking_in_a_case_lapses_by_the_sweeper_too(
        bookings, paying, provider, exchanges, dates, store, catalog, clock):
    """make proof seed 20261221029: a booking that stands with an open case (a second payment for
    it) sits in the review index, not the due index, so the sweeper never lapsed the places its
    dearer exchange held past their time, as seed 20261208154 found for a lost refund answer."""
    from holdfast.services import transitions
    from holdfast.services.sweeper import sweep

    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap)
    exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    stored = store.get_booking(booking.booking_id)
    in_case = transitions.apply(store, stored, clock(), actor="test", action="case_opened", decision="test",
                                review={"reason": "second_payment_for_booking"})
    assert booking.booking_id not in store.due_bookings("9999", 100)
    clock.advance(601 + 60)
    counts = sweep(store, clock, bookings.expire, lambda *_: None, give_up=lambda *_: None,
                   differences=paying.differences)
    assert counts.get("difference_lapsed") == 1, counts
    lapsed = store.get_booking(booking.booking_id)
    assert lapsed.held_difference is None and lapsed.event_id == cheap and lapsed.review == in_case.review
    assert _counts(catalog, cheap, dear) == [{"held": 0, "sold": 2}, {"held": 0, "sold": 0}]


def test_an_earlier_start_brings_the_difference_payments_settlement_forward_too(
        bookings, paying, provider, exchanges, dates, store, directory, clock, catalog):
    """make proof seed 20261221156 (F5): the event of a booking paid by two payments starts earlier;
    the look of the first payment's settlement receipt moved to the new start (``follow_start``),
    the difference payment's stayed at the booking's copy of the old end, and the settlement,
    which sent the first, left the difference's unsent for weeks."""
    from datetime import timedelta

    from holdfast.clock import iso, parse_iso
    from holdfast.services.listing import ListingService
    from holdfast.services.settlements import Settlements, follow_start

    booking = _moved_dearer_with_receipts(bookings, paying, provider, exchanges, dates, directory)
    [difference] = _difference_payments(provider, booking.booking_id)
    _, dear = dates
    new_start = clock() + timedelta(hours=2)
    ListingService(store, clock).update(dear, {"starts_at": new_start}, ORG)
    follow_start(store, clock, dear)
    moved = store.get_booking(booking.booking_id)
    assert moved.settlement_due == iso(new_start)
    assert [moved.difference_settlement_due(part) for part in moved.settled_differences] == [iso(new_start)]
    clock.advance((new_start - clock()).total_seconds() + 1)
    assert Settlements(store, provider, clock).settle(moved) == "sent"
    assert sorted(r["payment_id"] for r in provider.receipts.values()) == \
        sorted([booking.payment.payment_id, difference["id"]])
    assert store.get_booking(booking.booking_id).settlement_due is None
    assert parse_iso(iso(new_start)) < parse_iso("2030-02-08T20:00:00Z")


def test_a_difference_paid_after_the_start_moved_earlier_is_settled_with_the_first_payment(
        bookings, paying, provider, exchanges, dates, store, directory, clock):
    """The same, with the difference still being paid when the start moves: once paid, its
    settlement receipt is judged by the event as it is now when the first payment's is sent,
    not by a look at the old start."""
    from datetime import timedelta

    from holdfast.services.listing import ListingService
    from holdfast.services.settlements import Settlements, follow_start

    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, cheap)
    exchanges.exchange(booking.booking_id, "alice", "x-1", dear, HoldPlaces(quantity=2))
    [difference] = _difference_payments(provider, booking.booking_id)
    new_start = clock() + timedelta(hours=2)
    ListingService(store, clock).update(dear, {"starts_at": new_start}, ORG)
    follow_start(store, clock, dear)
    provider.pay(difference["id"])
    paying.apply_provider_payment(provider.get_payment(difference["id"]))
    assert store.get_booking(booking.booking_id).event_id == dear
    clock.advance((new_start - clock()).total_seconds() + 1)
    assert Settlements(store, provider, clock).settle(store.get_booking(booking.booking_id)) == "sent"
    assert sorted(r["payment_id"] for r in provider.receipts.values()) == \
        sorted([booking.payment.payment_id, difference["id"]])


def test_an_exchange_to_an_earlier_date_brings_the_settlement_look_forward(
        bookings, paying, provider, exchanges, dates, store, directory, clock):
    """make proof seed 20261269052 (F6): a booking paid with a receipt is exchanged to places of
    an earlier date. The first payment's settlement look, stored at payment as the old start, stayed
    there: the sweeper, which reads the due index, would send the 54-FZ settlement receipt a week
    after the service was rendered."""
    from holdfast.clock import parse_iso

    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    cheap, dear = dates
    booking = _paid(bookings, paying, provider, dear)
    assert booking.settlement_due == "2030-02-08T20:00:00.000Z"
    exchanges.exchange(booking.booking_id, "alice", "x-1", cheap, HoldPlaces(quantity=2))
    moved = store.get_booking(booking.booking_id)
    assert moved.event_id == cheap and moved.settlement_due == "2030-02-01T20:00:00.000Z"
    clock.advance((parse_iso("2030-02-01T20:00:00Z") - clock()).total_seconds() + 1)
    assert booking.booking_id in store.due_bookings(iso(clock()), 100)


def test_an_exchange_to_an_earlier_date_brings_each_difference_payments_look_forward_too(
        bookings, paying, provider, exchanges, dates, store, directory, clock, catalog):
    """The same for a booking paid by two payments whose looks were both stored (a sweep before the
    start rescheduled them): an exchange at the same price to an earlier date moves both."""
    from holdfast.services.settlements import Settlements

    booking = _moved_dearer_with_receipts(bookings, paying, provider, exchanges, dates, directory)
    assert Settlements(store, provider, clock).settle(store.get_booking(booking.booking_id)) == "rescheduled"
    stored = store.get_booking(booking.booking_id)
    assert [stored.first_settlement_due, *(stored.difference_settlement_due(p) for p in stored.settled_differences)] \
        == ["2030-02-08T20:00:00.000Z"] * 2
    early = catalog.create_event(event_request(starts_at="2030-02-05T20:00:00Z", exchange_until_hours=24, capacity=2),
                                 "ev-early", ORG)["event_id"]
    exchanges.exchange(booking.booking_id, "alice", "x-2", early, HoldPlaces(quantity=2))
    moved = store.get_booking(booking.booking_id)
    assert moved.event_id == early and moved.amount.text == "3000.00"
    assert [moved.first_settlement_due, *(moved.difference_settlement_due(p) for p in moved.settled_differences)] \
        == ["2030-02-05T20:00:00.000Z"] * 2
    assert moved.settlement_due == "2030-02-05T20:00:00.000Z"
