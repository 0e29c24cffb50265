"""NotificationLog: one delivery per customer and dedup id, taken back when the e-mail failed."""
from __future__ import annotations


def test_a_notification_is_recorded_once(backend, ids):
    log, ann = backend.notifications, ids("ann")
    assert log.record_notification(ann, "paid:b1", {"type": "paid", "booking_id": "b1", "count": 2}) is True
    assert log.record_notification(ann, "paid:b1", {"type": "paid", "booking_id": "b1", "count": 3}) is False
    assert backend.raw(f"CUSTOMER#{ann}", "NOTE#paid:b1")["count"] == 2      # the first one stays
    assert log.record_notification(ann, "paid:b2", {"type": "paid"}) is True
    assert log.record_notification(ids("ben"), "paid:b1", {"type": "paid"}) is True


def test_a_forgotten_notification_can_be_recorded_again(backend, ids):
    log, ann = backend.notifications, ids("ann")
    log.record_notification(ann, "n1", {"type": "reminder"})
    log.forget_notification(ann, "n1")
    assert backend.raw(f"CUSTOMER#{ann}", "NOTE#n1") is None
    assert log.record_notification(ann, "n1", {"type": "reminder"}) is True
    log.forget_notification(ann, "never-recorded")                       # nothing to forget: no error


def test_a_customers_notifications_list_in_dedup_order_as_stored(backend, ids):
    """``list_notifications`` is no port member (the CLI reads it), but service tests look with it."""
    log, ann = backend.notifications, ids("ann")
    log.record_notification(ann, "b-1#000002", {"type": "booking.confirmed", "version": 2})
    log.record_notification(ann, "b-1#000001", {"type": "booking.held", "version": 1})
    log.record_notification(ids("ben"), "b-9#000001", {"type": "booking.held"})
    assert log.list_notifications(ann) == [
        {"pk": f"CUSTOMER#{ann}", "sk": "NOTE#b-1#000001", "type": "booking.held", "version": 1},
        {"pk": f"CUSTOMER#{ann}", "sk": "NOTE#b-1#000002", "type": "booking.confirmed", "version": 2}]


def test_a_recorded_notification_is_known_before_anything_is_rendered_for_it(backend, ids):
    """Issue 35: the notifier asks for the record first (``notification_recorded``), and a batch
    asks for its bookings, offerings and records in one read (``message_reads``)."""
    log, ann = backend.notifications, ids("ann")
    assert log.notification_recorded(ann, "b-1#000001") is False
    log.record_notification(ann, "b-1#000001", {"type": "booking.held"})
    assert log.notification_recorded(ann, "b-1#000001") is True
    assert log.notification_recorded(ids("ben"), "b-1#000001") is False
    bookings, events, recorded = backend.store.message_reads(
        ["no-such-booking"], ["no-such-event"], [(ann, "b-1#000001"), (ann, "b-1#000002")])
    assert bookings == {} and events == {} and recorded == {(ann, "b-1#000001")}


def test_a_held_notification_moves_from_one_delivery_to_the_next_once(backend, ids):
    """Issue 42, finding 6: ``mark_notification`` moves a record held as ``unconfirmed`` on when
    its address is confirmed, once; ``booking_outbox`` reads a booking's change as it was sent."""
    log, ann = backend.notifications, ids("ann")
    log.record_notification(ann, "b-1#000001", {"type": "booking.held", "delivery": "unconfirmed"})
    assert log.mark_notification(ann, "b-1#000001", "unconfirmed", "sent_after_confirmation") is True
    assert log.mark_notification(ann, "b-1#000001", "unconfirmed", "sent_after_confirmation") is False
    assert backend.raw(f"CUSTOMER#{ann}", "NOTE#b-1#000001")["delivery"] == "sent_after_confirmation"
    assert log.mark_notification(ann, "never-recorded", "unconfirmed", "sent") is False
    assert log.booking_outbox(ids("no-booking"), 1) is None
