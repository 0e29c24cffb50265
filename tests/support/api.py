"""A small client for the booking API as a customer, an organizer or an operator would call it."""
from __future__ import annotations

import threading
import time
import uuid
from typing import Any, Callable

import requests

ORGANIZER_KEY = "local-organizer-key"


class BookingApi:
    def __init__(self, base_url: str, organizer_key: str = ORGANIZER_KEY, timeout: float = 30) -> None:
        self.base = base_url.rstrip("/")
        self.organizer_key = organizer_key
        self.timeout = timeout
        self._local = threading.local()

    @property
    def http(self) -> requests.Session:
        """One session per thread: requests' sessions are not meant to be shared across threads."""
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def request(self, method: str, path: str, *, customer: str | None = None, key: str | None = None,
                organizer: bool = False, **kwargs: Any) -> requests.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if customer:
            headers["X-Customer-Id"] = customer
        if key:
            headers["Idempotency-Key"] = key
        if organizer:
            headers["X-Api-Key"] = self.organizer_key
        return self.http.request(method, self.base + path, headers=headers, timeout=self.timeout, **kwargs)

    def create_event(self, **overrides: Any) -> dict[str, Any]:
        """An event 60 days ahead at 20:00 UTC on the stack's clock (a fixed date would start one
        day and refuse every booking: a date bomb), unless ``starts_at`` is given."""
        from datetime import timedelta

        from holdfast.clock import iso, system_clock

        starts = (system_clock() + timedelta(days=60)).replace(hour=20, minute=0, second=0, microsecond=0)
        body = {"name": "Integration night", "venue": "Hall", "city": "Moscow", "category": "club",
                "starts_at": iso(starts), "price": {"value": "1000.00", "currency": "RUB"}, "capacity": 10}
        body.update(overrides)
        body = {k: v for k, v in body.items() if v is not None}
        answer = self.request("POST", "/events", organizer=True, json=body)
        assert answer.status_code == 201, answer.text
        return answer.json()

    def create_resource(self, **overrides: Any) -> dict[str, Any]:
        body = {"name": "Hall A", "timezone": "Europe/Moscow", "opening_hours": {"open": "09:00", "close": "21:00"}}
        answer = self.request("POST", "/resources", organizer=True, json=body | overrides)
        assert answer.status_code == 201, answer.text
        return answer.json()

    def create_service(self, resource_ids: list[str], **overrides: Any) -> dict[str, Any]:
        body = {"name": "Yoga", "mode": "group", "capacity": 3, "duration_minutes": 60, "resource_ids": resource_ids,
                "price": {"value": "700.00", "currency": "RUB"}}
        body = {k: v for k, v in (body | overrides).items() if v is not None}
        answer = self.request("POST", "/services", organizer=True, json=body)
        assert answer.status_code == 201, answer.text
        return answer.json()

    def availability(self, service_id: str, day: str) -> list[dict[str, Any]]:
        answer = self.request("GET", f"/services/{service_id}/availability", params={"date": day})
        assert answer.status_code == 200, answer.text
        return answer.json()["slots"]

    def book_slot(self, service_id: str, customer: str, body: dict[str, Any], key: str | None = None) -> requests.Response:
        return self.request("POST", f"/services/{service_id}/bookings", customer=customer, key=key or str(uuid.uuid4()),
                            json=body)

    def counts(self, event_id: str) -> dict[str, int]:
        return self.request("GET", f"/events/{event_id}").json()["counts"]

    def book(self, event_id: str, customer: str, body: dict[str, Any] | None = None, key: str | None = None) -> requests.Response:
        return self.request("POST", f"/events/{event_id}/bookings", customer=customer, key=key or str(uuid.uuid4()),
                            json=body or {"quantity": 1})

    def pay(self, booking_id: str, customer: str, key: str | None = None) -> requests.Response:
        return self.request("POST", f"/bookings/{booking_id}/payment", customer=customer, key=key or str(uuid.uuid4()))

    def booking(self, booking_id: str, customer: str) -> dict[str, Any]:
        answer = self.request("GET", f"/bookings/{booking_id}", customer=customer)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def cancel(self, booking_id: str, customer: str) -> requests.Response:
        return self.request("POST", f"/bookings/{booking_id}/cancel", customer=customer)

    def wait_for(self, booking_id: str, customer: str, predicate: Callable[[dict[str, Any]], bool],
                 timeout: float = 20.0, what: str = "condition") -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            booking = self.booking(booking_id, customer)
            if predicate(booking):
                return booking
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; booking is {booking['status']}: "
                                     f"{[e['action'] for e in booking['journal']]}")
            time.sleep(0.1)

    def wait_status(self, booking_id: str, customer: str, status: str, timeout: float = 20.0) -> dict[str, Any]:
        return self.wait_for(booking_id, customer, lambda b: b["status"] == status, timeout, f"status {status}")
