"""The `make run` demo of appointment slots: a resource, a group class and a private hire on it,
and the curl lines that book them (local development only)."""
from __future__ import annotations

import time
from datetime import timedelta
from typing import Callable
from zoneinfo import ZoneInfo

from holdfast.clock import system_clock

ZONE = "Europe/Moscow"


def create(api: str, post: Callable[[str, dict, dict], dict], organizer_key: str) -> str:
    """Create the demo resource and services; return the walkthrough lines to print."""
    run = int(time.time())
    headers = {"X-Api-Key": organizer_key}
    hall = post(api + "/resources", {"name": "Studio hall", "timezone": ZONE,
                                     "opening_hours": {"open": "09:00", "close": "21:00"}},
                headers | {"Idempotency-Key": f"demo-hall-{run}"})
    room = hall["resource_id"]
    yoga = post(api + "/services", {
        "name": "Morning yoga", "city": "Moscow", "mode": "group", "capacity": 8, "duration_minutes": 60, "resource_ids": [room],
        "price": {"value": "700.00", "currency": "RUB"}, "hold_ttl_seconds": 600,
    }, headers | {"Idempotency-Key": f"demo-yoga-{run}"})
    hire = post(api + "/services", {
        "name": "Hall hire", "city": "Moscow", "mode": "private", "duration_minutes": 90, "step_minutes": 30, "resource_ids": [room],
        "price": {"value": "5000.00", "currency": "RUB"}, "hold_ttl_seconds": 600,
    }, headers | {"Idempotency-Key": f"demo-hire-{run}"})
    for service in (yoga, hire):      # listed in the catalog page's appointments (GET /services)
        post(f"{api}/services/{service['service_id']}/publish", {}, headers)
    day = (system_clock().astimezone(ZoneInfo(ZONE)) + timedelta(days=1)).date().isoformat()
    ysid, hsid = yoga["service_id"], hire["service_id"]
    return f"""
Appointments: resource {room} ({ZONE}, 09:00-21:00)
  group class  {ysid}: 8 seats, 60 min, two-stage payment
  private hire {hsid}: the whole hall, 90 min on a 30-min step
  curl -s '{api}/services/{ysid}/availability?date={day}'
  curl -s -X POST {api}/services/{ysid}/bookings -H 'X-Customer-Id: alice' -H 'Idempotency-Key: yoga-1' \\
       -d '{{"starts_at": "{day}T10:00:00+03:00", "resource_id": "{room}", "quantity": 2}}'
  curl -s -X POST {api}/services/{hsid}/bookings -H 'X-Customer-Id: bob' -H 'Idempotency-Key: hire-1' \\
       -d '{{"starts_at": "{day}T10:30:00+03:00", "resource_id": "{room}"}}'   # 409: the class uses the hall
  then pay, read and cancel with the /bookings/<booking_id> lines above.
  In a browser: {api}/index.html (the catalog's appointments) or {api}/service.html?id={ysid}&date={day}
"""
