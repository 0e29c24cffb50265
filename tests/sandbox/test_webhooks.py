"""Notifications: shape, source address, background delivery, redelivery, and webhook faults."""
from __future__ import annotations

import time

from yookassa import Payment
from yookassa.domain.notification import WebhookNotificationFactory

from devstack.paysandbox import SandboxControl, SandboxServer

from .conftest import SECRET, SHOP_ID, Receiver, settle
from .helpers import create_payment, key, paid_payment, refund


def test_every_status_change_notifies_with_the_full_object(sandbox, control, receiver):
    p = paid_payment(control, "100.00", capture=False)
    Payment.capture(p.id, idempotency_key=key())
    r = refund(p.id, "5.00")
    bodies = receiver.wait(3)
    assert [b["event"] for b in bodies] == [
        "payment.waiting_for_capture", "payment.succeeded", "refund.succeeded"]
    assert all(b["type"] == "notification" for b in bodies)
    assert bodies[0]["object"]["status"] == "waiting_for_capture"
    assert bodies[1]["object"] == {**bodies[1]["object"], "id": p.id, "status": "succeeded", "paid": True}
    assert bodies[2]["object"]["id"] == r.id and bodies[2]["object"]["payment_id"] == p.id
    for raw in receiver.received:
        assert raw["client"] == "127.0.0.1"
        assert raw["content_type"].startswith("application/json")
    # the official SDK parses what the sandbox sends
    n = WebhookNotificationFactory().create(bodies[1])
    assert n.event == "payment.succeeded" and n.object.id == p.id
    refund_note = WebhookNotificationFactory().create(bodies[2])
    assert refund_note.object.payment_id == p.id


def test_no_notification_for_creation(sandbox, control, receiver):
    create_payment()
    settle(0.2)
    assert receiver.bodies() == []
    assert control.deliveries() == []


def test_deliveries_run_in_background_not_inside_the_request(sandbox, control, receiver):
    receiver.sleep = 0.6
    p = create_payment(capture=False)
    control.pay(p.id)
    started = time.monotonic()
    Payment.cancel(p.id, idempotency_key=key())
    assert time.monotonic() - started < 0.5
    events = [b["event"] for b in receiver.wait(2, timeout=5)]
    assert events == ["payment.waiting_for_capture", "payment.canceled"]


def test_redelivery_after_receiver_answers_500(sandbox, control, receiver):
    receiver.codes = [500, 500]
    p = paid_payment(control)
    log = control.wait_for_deliveries(1)
    assert [(d["attempt"], d["status_code"], d["outcome"]) for d in log] == [(1, 500, "retry_scheduled")]
    settle(0.2)
    assert len(receiver.received) == 1  # no retry before the backoff elapses on the sandbox clock
    control.advance(10)
    control.wait_for_deliveries(2)
    control.advance(20)
    log = control.wait_for_deliveries(3)
    assert [(d["attempt"], d["status_code"], d["outcome"]) for d in log] == [
        (1, 500, "retry_scheduled"), (2, 500, "retry_scheduled"), (3, 200, "delivered")]
    assert {d["object_id"] for d in log} == {p.id}
    assert {d["event"] for d in log} == {"payment.succeeded"}
    assert all(d["url"] == receiver.url for d in log)
    assert [b["object"]["id"] for b in receiver.bodies()] == [p.id] * 3


def test_redelivery_after_connection_error(sandbox, control):
    control.set_webhooks(["http://127.0.0.1:9/nobody-listens"])
    paid_payment(control)
    log = control.wait_for_deliveries(1)
    assert log[0]["status_code"] is None
    assert log[0]["error"] and log[0]["outcome"] == "retry_scheduled"
    control.advance(10)
    log = control.wait_for_deliveries(2)
    assert [d["attempt"] for d in log] == [1, 2]


def test_redelivery_stops_at_the_end_of_the_window():
    rcv = Receiver()
    rcv.codes = [500] * 20
    with SandboxServer(port=0, shop_id=SHOP_ID, secret_keys=[SECRET], webhook_urls=[rcv.url],
                       redelivery_window_seconds=100, redelivery_base_seconds=10) as srv:
        control = SandboxControl(srv.control_url)
        from yookassa import Configuration
        Configuration.configure(SHOP_ID, SECRET, api_url=srv.base_url)
        paid_payment(control)
        control.wait_for_deliveries(1)
        for step, expected in ((10, 2), (20, 3), (40, 4)):  # attempts at t=0, 10, 30, 70
            control.advance(step)
            control.wait_for_deliveries(expected)
        log = control.wait_for_deliveries(4)
        assert [d["outcome"] for d in log] == ["retry_scheduled"] * 3 + ["gave_up"]
        control.advance(1000)
        settle(0.2)
        assert len(control.deliveries()) == 4
    rcv.close()


def test_multiple_webhook_urls_and_add_via_control(sandbox, control, receiver):
    second = Receiver()
    try:
        assert control.add_webhook(second.url) == [receiver.url, second.url]
        paid_payment(control)
        assert [b["event"] for b in receiver.wait(1)] == ["payment.succeeded"]
        assert [b["event"] for b in second.wait(1)] == ["payment.succeeded"]
        assert control.webhooks()["urls"] == [receiver.url, second.url]
    finally:
        second.close()


def test_duplicate_fault(sandbox, control, receiver):
    control.add_fault("duplicate", count=2, match={"event": "payment.succeeded"})
    p = paid_payment(control)
    bodies = receiver.wait(3)
    settle(0.1)
    assert len(receiver.bodies()) == 3
    assert all(b == bodies[0] for b in bodies) and bodies[0]["object"]["id"] == p.id
    assert sorted(d["copy"] for d in control.deliveries()) == [0, 1, 2]


def test_drop_once_fault_then_redelivered(sandbox, control, receiver):
    control.add_fault("drop_once")
    paid_payment(control)
    log = control.wait_for_deliveries(1)
    assert log[0]["error"] == "dropped by fault drop_once"
    assert receiver.bodies() == []
    control.advance(10)
    assert [b["event"] for b in receiver.wait(1)] == ["payment.succeeded"]


def test_drop_forever_fault_for_one_payment(sandbox, control, receiver):
    victim = create_payment()
    other = create_payment()
    control.add_fault("drop_forever", match={"object_id": victim.id})
    control.pay(victim.id)
    control.pay(other.id)
    assert [b["object"]["id"] for b in receiver.wait(1)] == [other.id]
    control.advance(86400)
    settle(0.2)
    assert [b["object"]["id"] for b in receiver.bodies()] == [other.id]
    dropped = control.deliveries(object_id=victim.id)
    assert [d["outcome"] for d in dropped] == ["dropped_forever"]
    assert Payment.find_one(victim.id).status == "succeeded"  # GET still tells the truth


def test_delay_fault_on_webhook(sandbox, control, receiver):
    control.add_fault("delay", "webhook", seconds=120)
    paid_payment(control)
    settle(0.2)
    assert receiver.bodies() == []
    control.advance(120)
    assert [b["event"] for b in receiver.wait(1)] == ["payment.succeeded"]


def test_hold_and_release_reorders(sandbox, control, receiver):
    control.add_fault("hold", times=2)
    p = paid_payment(control)
    r = refund(p.id, "1.00")
    settle(0.2)
    assert receiver.bodies() == []
    assert control.webhooks()["held"] == 2
    assert control.release(order="lifo") == 2
    bodies = receiver.wait(2)
    assert [(b["event"], b["object"]["id"]) for b in bodies] == [("refund.succeeded", r.id),
                                                                 ("payment.succeeded", p.id)]


def test_release_only_matching(sandbox, control, receiver):
    control.add_fault("hold", times=2)
    a = paid_payment(control)
    b = paid_payment(control)
    assert control.release(object_id=b.id) == 1
    assert [x["object"]["id"] for x in receiver.wait(1)] == [b.id]
    assert control.release() == 1
    assert [x["object"]["id"] for x in receiver.wait(2)] == [b.id, a.id]


def test_forge_fault_rewrites_the_next_notification(sandbox, control, receiver):
    control.add_fault("forge", event="payment.succeeded", match={"event": "payment.waiting_for_capture"})
    p = paid_payment(control, capture=False)
    body = receiver.wait(1)[0]
    assert body["event"] == "payment.succeeded" and body["object"]["status"] == "succeeded"
    assert Payment.find_one(p.id).status == "waiting_for_capture"
    assert control.deliveries()[0]["forged"] is True


def test_forge_action_claims_success_for_a_pending_payment(sandbox, control, receiver):
    p = create_payment()
    forged = control.forge(p.id, "payment.succeeded")
    assert forged["status"] == "succeeded" and forged["paid"] is True
    body = receiver.wait(1)[0]
    assert body["event"] == "payment.succeeded" and body["object"]["id"] == p.id
    assert Payment.find_one(p.id).status == "pending"
    assert control.notifications()[0]["forged"] is True


def test_source_address_is_bound():
    rcv = Receiver()
    with SandboxServer(port=0, shop_id=SHOP_ID, secret_keys=[SECRET], webhook_urls=[rcv.url],
                       webhook_source_address="127.0.0.1") as srv:
        from yookassa import Configuration
        Configuration.configure(SHOP_ID, SECRET, api_url=srv.base_url)
        control = SandboxControl(srv.control_url)
        paid_payment(control)
        rcv.wait(1)
        assert control.webhooks()["source_address"] == "127.0.0.1"
    assert [r["client"] for r in rcv.received] == ["127.0.0.1"]
    rcv.close()
