"""Finding 8 of issue 42 on the local stack: the gate program against the real API through a relay
that answers 429 (as the web ACL's per-address block would) or is cut. A reservation refunded after
its token was shown opens no barrier either way; answered busy, the gate admits a valid token only
while its voided list is fresh and gives an unknown car no local ticket, where a real partition
follows the lot's offline policy. (A stale voided list under a busy backend:
tests/gate_controller/test_busy.py.)"""
from __future__ import annotations

import pytest

from gate_controller.backend import Backend
from gate_controller.controller import Gate
from gate_controller.journal import Journal
from holdfast.clock import system_clock
from tests.integration.test_gate_offline import created, make_lot, paid_reservation
from tests.support.gate_stub import GateProxy

pytestmark = pytest.mark.integration


def test_a_refunded_reservation_opens_no_barrier_and_a_busy_backend_admits_no_stranger(api, sandbox, tmp_path):
    lot = make_lot(api)
    lot_id = lot["lot_id"]
    gate_made = created(api.request("POST", f"/lots/{lot_id}/gates", organizer=True, json={"name": "North"}))
    refunded = paid_reservation(api, sandbox, lot_id, "V001VV")
    kept = paid_reservation(api, sandbox, lot_id, "K001KK")
    cancelled = api.request("POST", f"/bookings/{refunded['booking_id']}/cancel", customer=refunded["customer"])
    assert cancelled.status_code == 200, cancelled.text

    proxy = GateProxy(api.base)
    proxy.start()
    journal = Journal(str(tmp_path / "north.sqlite3"))
    waits: list[float] = []
    # the gate program on the stack's clock, as the engine that signed the tokens (a test before
    # this one may have moved it hours ahead of the machine's: the tokens would be too early)
    gate = Gate(journal, Backend(proxy.url, lot_id, gate_made["gate_id"], gate_made["gate_key"], timeout=10,
                                 sleep=waits.append), lot_id, gate_made["gate_id"], clock=system_clock)
    try:
        refreshed = gate.refresh()
        assert refreshed["voided_reservations"] == 1
        proxy.always_busy = 429                                     # the relay answers as a WAF block would
        void = gate.entry(token=refunded["entry_token"])
        assert (void["open"], void["reason"]) == (False, "reservation_void")
        stranger = gate.entry(plate="X555XX")
        assert (stranger["open"], stranger["reason"]) == (False, "backend_busy")   # no local ticket
        assert len(waits) >= 3                                       # it retried before deciding
        admitted = gate.entry(token=kept["entry_token"])
        assert (admitted["open"], admitted["basis"]) == (True, "token")            # a fresh list vouches

        proxy.always_busy = None
        proxy.stop()                                                  # a real partition
        assert gate.entry(token=refunded["entry_token"])["reason"] == "reservation_void"
        local = gate.entry(plate="Y666YY")
        assert (local["open"], local["basis"]) == (True, "local_ticket")           # the lot's offline policy
    finally:
        proxy.stop()
        journal.close()
