"""SurgeQueue: the waiting room's numbers and each customer's place (services/admission.py)."""
from __future__ import annotations

from decimal import Decimal

T0 = 1_900_000_000_000
DAYS_2 = 2 * 24 * 3600


def test_an_unknown_room_is_empty(backend, ids):
    assert backend.surge.queue_state(ids("ev")) == {"issued": 0, "admitted": 0, "advanced_at": 0}


def test_numbers_are_issued_one_by_one_and_the_first_starts_the_horizons_clock(backend, ids):
    surge, event = backend.surge, ids("ev")
    assert surge.take_number(event, T0) == {"issued": 1, "admitted": 0, "advanced_at": T0}
    assert surge.take_number(event, T0 + 5) == {"issued": 2, "admitted": 0, "advanced_at": T0}
    assert surge.queue_state(event) == {"issued": 2, "admitted": 0, "advanced_at": T0}
    assert surge.take_number(ids("other"), T0 + 9)["issued"] == 1


def test_the_horizon_moves_only_from_the_value_read(backend, ids):
    surge, event = backend.surge, ids("ev")
    assert surge.advance_horizon(event, 0, 5, T0) is False          # no room yet: nothing created
    assert surge.queue_state(event) == {"issued": 0, "admitted": 0, "advanced_at": 0}
    surge.take_number(event, T0)
    assert surge.advance_horizon(event, 0, 5, T0 + 1_000) is True
    assert surge.advance_horizon(event, 0, 9, T0 + 2_000) is False   # someone moved it meanwhile
    assert surge.queue_state(event) == {"issued": 1, "admitted": 5, "advanced_at": T0 + 1_000}


def test_a_place_is_written_once_or_replaced_from_the_one_read(backend, ids):
    surge, event, ann = backend.surge, ids("ev"), ids("ann")
    assert surge.get_entry(event, ann) is None
    assert surge.put_entry(event, ann, 4, T0, replaces_seq=1) is False   # none to replace
    assert surge.put_entry(event, ann, 4, T0, None) is True
    assert surge.put_entry(event, ann, 5, T0 + 1, None) is False
    assert surge.put_entry(event, ann, 6, T0 + 2, replaces_seq=5) is False
    entry = surge.get_entry(event, ann)
    assert entry == {"pk": f"QUEUE#{event}#CUST#{ann}", "sk": "ENTRY", "event_id": event, "customer_id": ann,
                     "seq": 4, "joined_at": T0, "ttl": T0 // 1000 + DAYS_2}
    assert all(isinstance(entry[name], Decimal) for name in ("seq", "joined_at", "ttl"))
    assert surge.put_entry(event, ann, 7, T0 + 3, replaces_seq=4) is True
    assert surge.get_entry(event, ann)["seq"] == 7


def test_admission_is_recorded_once_for_the_place_named(backend, ids):
    surge, event, ann = backend.surge, ids("ev"), ids("ann")
    assert surge.mark_admitted(event, ann, 1, T0) == T0                  # no place: nothing written
    assert surge.get_entry(event, ann) is None
    surge.put_entry(event, ann, 3, T0, None)
    assert surge.mark_admitted(event, ann, 2, T0 + 1) == T0 + 1          # another place: nothing written
    assert "admitted_at" not in surge.get_entry(event, ann)
    assert surge.mark_admitted(event, ann, 3, T0 + 10) == T0 + 10
    assert surge.mark_admitted(event, ann, 3, T0 + 20) == T0 + 10        # the first time counts
    assert surge.get_entry(event, ann)["admitted_at"] == T0 + 10
