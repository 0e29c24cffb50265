"""The `make run` demo of parking: a lot with typed spaces and a gate, and the curl lines that
reserve a space, pay, and drive a car in and out (local development only)."""
from __future__ import annotations

import time
from datetime import timedelta
from typing import Callable

from holdfast.clock import system_clock

SPACES = ([{"space_id": f"C{n}", "type": "COMPACT", "zone": "A", "priority": n} for n in (1, 2)]
          + [{"space_id": f"R{n}", "type": "REGULAR", "zone": "A", "priority": n} for n in (1, 2, 3)]
          + [{"space_id": "L1", "type": "LARGE", "zone": "B", "priority": 1},
             {"space_id": "H1", "type": "HANDICAP", "zone": "A", "priority": 0}])


def create(api: str, post: Callable[[str, dict, dict], dict], organizer_key: str) -> str:
    """Create the demo lot and its gate; return the walkthrough lines to print."""
    run = int(time.time())
    headers = {"X-Api-Key": organizer_key}
    lot = post(api + "/lots", {
        "name": "Demo car park", "city": "Moscow", "timezone": "Europe/Moscow", "spaces": SPACES,
        "tariff": {"hourly": {"value": "150.00", "currency": "RUB"}, "daily_cap": {"value": "1200.00", "currency": "RUB"},
                   "grace_minutes": 10},
        "hold_ttl_seconds": 600, "no_show_grace_seconds": 900, "allow_offline_temporary_tickets": True,
    }, headers | {"Idempotency-Key": f"demo-lot-{run}"})
    lid = lot["lot_id"]
    post(f"{api}/lots/{lid}/publish", {}, headers)      # listed in the catalog page's parking (GET /lots)
    gate = post(f"{api}/lots/{lid}/gates", {"name": "North entrance"}, headers)
    gid, key = gate["gate_id"], gate["gate_key"]
    start = system_clock().replace(second=0, microsecond=0)   # the stack's clock (POST /dev/clock moves it)
    start = start.replace(minute=start.minute - start.minute % 30)
    window = f'"from": "{start:%Y-%m-%dT%H:%M}:00Z", "to": "{start + timedelta(hours=2):%Y-%m-%dT%H:%M}:00Z"'
    gates = f"{api}/lots/{lid}/gates/{gid}"
    return f"""
Parking: lot {lid} (2 compact, 3 regular, 1 large, 1 handicap; 150 RUB/h, 1200 RUB/day, 10 grace minutes)
  gate {gid}, key {key} (shown once; the backend keeps its sha256)
  curl -s {api}/lots/{lid}                                              # spaces now by type and state
  curl -s -X POST {api}/lots/{lid}/reservations -H 'X-Customer-Id: carol' -H 'Idempotency-Key: park-1' \\
       -d '{{"vehicle_type": "COMPACT", "plate": "A123BC77", {window}}}'
  pay it with the /bookings/<booking_id>/payment line above; once CONFIRMED its view has entry_token:
  curl -s {api}/bookings/<booking_id> -H 'X-Customer-Id: carol'
  curl -s -X POST {gates}/entry -H 'X-Gate-Key: {key}' -d '{{"event_id": "in-1", "token": "<entry_token>"}}'
  curl -s -X POST {gates}/exit -H 'X-Gate-Key: {key}' -d '{{"event_id": "out-1", "ticket_id": "<ticket_id>"}}'
  a car without a reservation (it pays at the exit when it stayed past the grace minutes):
  curl -s -X POST {gates}/entry -H 'X-Gate-Key: {key}' -d '{{"event_id": "in-2", "plate": "X777XX"}}'
  curl -s -X POST {gates}/exit -H 'X-Gate-Key: {key}' -d '{{"event_id": "out-2", "plate": "X777XX"}}'
  curl -s {gates}/config -H 'X-Gate-Key: {key}'                         # what the gate keeps for offline mode
  the gate's own program, which keeps working offline (gate_controller/README.md):
  echo '{key}' > gate.key
  .venv/bin/python -m gate_controller --api {api} --lot {lid} --gate {gid} --key-file gate.key refresh
  .venv/bin/python -m gate_controller --api {api} --lot {lid} --gate {gid} --key-file gate.key entry --plate Y888YY
"""
