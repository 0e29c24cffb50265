"""A kind's personal details (``Kind.personal_details``) reach the journal's erasure through the
kinds' registry: the domain lists only the core's own personal ids, and a kind it has never heard
of has its ids dropped from erased journal entries while it is registered."""
from __future__ import annotations

from holdfast import kinds
from holdfast.domain.booking import JournalEntry
from holdfast.domain.personal_data import PERSONAL_IDS, erased_entry
from tests.support.toy_kind import StandingZones


class BadgedZones(StandingZones):
    name = "toy_badged_zones"
    personal_details = ("badge",)
    # the toy kind's own states stay the toy kind's: another test may have it registered
    extra_states = ()


def test_a_registered_kinds_personal_ids_are_erased_from_journal_entries():
    entry = JournalEntry(at="t", action="admitted", actor="gate", from_status="CONFIRMED", to_status="ADMITTED",
                         decision="badge B-7 let in", ids={"booking_id": "b", "badge": "B-7", "customer_id": "c"})
    assert "badge" not in PERSONAL_IDS and erased_entry(entry).ids == {"booking_id": "b", "badge": "B-7"}
    kinds.register(BadgedZones())
    try:
        assert erased_entry(entry).ids == {"booking_id": "b"}
    finally:
        kinds.unregister(BadgedZones.name)
    assert erased_entry(entry).ids == {"booking_id": "b", "badge": "B-7"}
