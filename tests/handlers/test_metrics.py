"""Business metrics on the handlers' real paths: each invocation prints one EMF line (Powertools
Metrics) with what it did, in one namespace under one dimension."""
from __future__ import annotations

import json
import time

import pytest

from holdfast import observability
from tests.handlers.test_api_handlers import book, create_event
from tests.support.handlers import api_event, call, load_event


def emf_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{") and '"_aws"' in line]


def values(capsys) -> dict[str, list[float]]:
    """Every metric value printed since the last call, by metric name."""
    found: dict[str, list[float]] = {}
    for record in emf_lines(capsys.readouterr().out):
        for directive in record["_aws"]["CloudWatchMetrics"]:
            assert directive["Namespace"] == "Holdfast"
            assert directive["Dimensions"] == [["service"]]
            for metric in directive["Metrics"]:
                value = record[metric["Name"]]
                found.setdefault(metric["Name"], []).extend(value if isinstance(value, list) else [value])
    return found


def test_a_hold_and_a_sold_out_answer_are_counted(handler_env, capsys):
    event = create_event(capacity=2)
    capsys.readouterr()
    status, _ = book(event["event_id"], {"quantity": 2}, key="m-1")
    assert status == 201
    assert values(capsys) == {"HoldsMade": [1.0]}
    status, answer = book(event["event_id"], {"quantity": 1}, key="m-2", customer="customer-43")
    assert status == 409 and answer["error"]["code"] == "sold_out"
    assert values(capsys) == {"SoldOutAnswers": [1.0]}
    # a repeat of the first request holds nothing new and counts nothing
    assert book(event["event_id"], {"quantity": 2}, key="m-1")[0] == 201
    assert values(capsys) == {}


def test_a_notification_from_another_network_is_counted(handler_env, capsys):
    status, _ = call("payment_webhook", api_event("payment_notification.json", source_ip="203.0.113.9"))
    assert status == 403
    assert values(capsys) == {"WebhooksRefused": [1.0]}
    status, _ = call("payment_webhook", api_event("payment_notification.json"))
    assert status == 200
    assert values(capsys) == {}


def test_the_expiry_task_reports_how_late_it_released_the_hold(handler_env, capsys):
    event = create_event(capacity=2, hold_ttl_seconds=1)
    status, booking = book(event["event_id"], {"quantity": 1}, key="lag-1")
    assert status == 201
    time.sleep(1.3)
    capsys.readouterr()
    result = call("expire_hold", {**load_event("expire_hold.json"), "booking_id": booking["booking_id"]})[1]
    assert result["outcome"] == "expired"
    found = values(capsys)
    assert found["HoldsExpired"] == [1.0]
    [lag] = found["ExpiryLagSeconds"]
    assert 0.2 <= lag < 5


def test_counts_made_outside_an_invocation_are_not_printed_by_the_next_one(handler_env, capsys):
    observability.count(observability.HOLDS_MADE, 5)   # e.g. a service called directly by a test
    status, _ = call("payment_webhook", api_event("payment_notification.json", source_ip="203.0.113.9"))
    assert status == 403
    assert values(capsys) == {"WebhooksRefused": [1.0]}


def test_each_booking_write_is_logged_with_its_ids_and_nothing_else(handler_env, caplog):
    event = create_event(capacity=2)
    observability.logger.setLevel("INFO")
    try:
        status, booking = book(event["event_id"], {"quantity": 1, "contact_email": "ann@example.com"}, key="log-1")
    finally:
        observability.logger.setLevel("WARNING")
    assert status == 201
    [record] = [r for r in caplog.records if r.getMessage() == "booking written"]
    assert {k: getattr(record, k) for k in ("booking_id", "event_id", "action", "to_status")} == {
        "booking_id": booking["booking_id"], "event_id": event["event_id"], "action": "hold_created", "to_status": "HELD"}
    assert "ann@example.com" not in json.dumps(vars(record), default=str)


def test_a_transaction_cancelled_by_a_conflict_is_counted_with_its_retry():
    from botocore.exceptions import ClientError

    from holdfast.adapters.codec import Table

    class Conflicting:
        """A DynamoDB client whose first transaction collides with another writer's."""
        calls = 0

        def transact_write_items(self, **_):
            Conflicting.calls += 1
            if Conflicting.calls == 1:
                raise ClientError({"Error": {"Code": "TransactionCanceledException"},
                                   "CancellationReasons": [{"Code": "TransactionConflict"}, {"Code": "None"}]},
                                  "TransactWriteItems")

    table = Table("t", Conflicting())
    observability.discard()
    assert table._transact([("a", {"Put": {}}), ("b", {"Put": {}})]) is None
    assert observability.pending() == {"TransactionConflicts": 1, "TransactionRetries": 1}
    observability.discard()


@pytest.mark.parametrize("change, counted", [
    (dict(action="late_payment_refund_started", to="REFUND_PENDING"), {"LatePaymentsRefunded": 1}),
    (dict(action="late_authorisation_cancelled"), {"LatePaymentsRefunded": 1}),
    (dict(action="manual_review_opened", to="MANUAL_REVIEW", review="paid_in_time_places_resold"),
     {"ReviewsOpened": 1, "LatePaymentsToReview": 1}),
    (dict(action="manual_review_opened", to="MANUAL_REVIEW", review="provider_unreachable", actor="reconciler"),
     {"ReviewsOpened": 1, "ReconciliationGiveUps": 1}),
    (dict(action="reconciliation_limit_reached", to="PAYMENT_FAILED", actor="reconciler"),
     {"ReconciliationGiveUps": 1, "PaymentsFailed": 1}),
    (dict(action="review_confirmed", before_review="paid_in_time_places_resold", to="CONFIRMED", actor="operator"),
     {"ReviewsResolved": 1, "Confirmations": 1}),
    (dict(action="payment_outcome_unknown"), {"PaymentOutcomesUnknown": 1}),
    (dict(action="reconciliation_check"), {}),
])
def test_what_each_kind_of_booking_write_counts(change, counted):
    from types import SimpleNamespace as Obj

    from holdfast.domain.statuses import BookingStatus

    def booking(status, review):
        return Obj(booking_id="b", event_id="e", version=2, payment=None, hold_expires_at="2030-01-01T00:00:00Z",
                   status=BookingStatus(status), review={"reason": review} if review else None)

    before = booking("PAYMENT_PENDING" if change.get("to") != "CONFIRMED" else "MANUAL_REVIEW",
                     change.get("before_review"))
    after = booking(change.get("to", before.status.value), change.get("review"))
    entry = Obj(action=change["action"], actor=change.get("actor", "provider"), at="2030-01-01T00:00:05Z")
    observability.discard()
    observability.booking_written(before, after, entry)
    assert observability.pending() == counted
    observability.discard()
