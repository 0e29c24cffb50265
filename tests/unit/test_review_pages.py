"""GET /admin/reviews in pages (issue 34, finding 6): a page is one index query and one batch read
of its bookings, never a read per booking; the cursor walks the whole list once, in order."""
from __future__ import annotations

import base64
import json

import pytest

from holdfast.domain.errors import InvalidRequest
from tests.unit.conftest import event_request
from tests.unit.test_reconciliation import hold


class CountingClient:
    def __init__(self, client) -> None:
        self.client, self.calls = client, []

    def __getattr__(self, name):
        self.calls.append(name)
        return getattr(self.client, name)


def late_payment_in_review(catalog, bookings, payments, provider, clock, n):
    """A booking paid after its hold ran out and its place was sold again: it waits for an operator."""
    event = catalog.create_event(event_request(capacity=1))
    booking = hold(bookings, event, customer=f"late-{n}", key=f"late-{n}", n=1)
    payment_id = payments.start_payment(booking.booking_id, f"late-{n}", f"p-{n}").payment.payment_id
    provider.pay(payment_id, at="2030-01-01T12:09:00.000Z")
    clock.advance(601)
    bookings.expire(booking.booking_id)
    hold(bookings, event, customer=f"next-{n}", key=f"next-{n}", n=1)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    return booking.booking_id


def test_the_review_list_comes_in_pages_each_one_query_and_one_batch_read(catalog, bookings, payments, provider,
                                                                          reviews, store, clock):
    waiting = [late_payment_in_review(catalog, bookings, payments, provider, clock, n) for n in range(5)]
    assert sorted(r["booking_id"] for r in reviews.open_reviews()) == sorted(waiting)
    counting = store.client = CountingClient(store.client)
    seen, cursor, pages = [], None, 0
    while True:
        counting.calls.clear()
        page = reviews.review_page(2, cursor)
        assert counting.calls.count("query") == 1 and "get_item" not in counting.calls
        assert counting.calls.count("batch_get_item") == (1 if page["reviews"] else 0)
        seen += [r["booking_id"] for r in page["reviews"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(waiting) and len(seen) == len(set(seen))
    assert pages >= 3
    assert [r["booking_id"] for r in reviews.review_page()["reviews"]] == seen   # one page, the same order
    assert all(r["status"] == "MANUAL_REVIEW" for r in reviews.review_page()["reviews"])
    counting.calls.clear()
    assert len(store.list_reviews()) == len(waiting) and "get_item" not in counting.calls   # the sweeper's read


def review_cursor(**changes):
    key = {"pk": "BOOKING#x", "sk": "META", "gsi1pk": "REVIEW", "gsi1sk": "2030-01-01T00:00:00.000Z"} | changes
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode()


@pytest.mark.parametrize("limit, cursor, code", [
    (0, None, "invalid_limit"), (101, None, "invalid_limit"),
    (10, "not-a-cursor", "invalid_cursor"),
    (10, "eyJwayI6ICJFVkVOVCN4In0=", "invalid_cursor"),   # base64 JSON, but not a review list's key
    # the shape of one, but a start key DynamoDB itself would refuse
    (10, review_cursor(gsi1sk=""), "invalid_cursor"),
    (10, review_cursor(gsi1sk="z" * 1025), "invalid_cursor"),
])
def test_a_bad_limit_or_cursor_is_a_400_with_a_code(reviews, limit, cursor, code):
    with pytest.raises(InvalidRequest) as refused:
        reviews.review_page(limit, cursor)
    assert refused.value.code == code


def test_a_cursor_of_the_right_shape_is_a_place_in_the_list_not_an_error(reviews):
    assert reviews.review_page(10, review_cursor()) == {"reviews": [], "next_cursor": None}
