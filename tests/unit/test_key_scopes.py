"""What a key may give (services/organizers.py over the in-memory directory), for any scopes and
offerings: a key is made exactly when it asks for no scope and no offering its giver lacks, it
then holds exactly what it asked for (its giver's rights when it named none), and the key
authenticates to those rights; nothing is written otherwise."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from holdfast.domain.errors import Forbidden
from holdfast.kinds.products import every_scope
from holdfast.services.organizers import OrganizerService
from tests.support.fake_organizers import FakeOrganizerDirectory
from tests.unit.conftest import ManualClock

SCOPES = every_scope()
OFFERINGS = ("ev-a", "ev-b", "ev-c")
scope_sets = st.none() | st.frozensets(st.sampled_from(SCOPES), min_size=1)
offering_sets = st.none() | st.frozensets(st.sampled_from(OFFERINGS), min_size=1)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(giver_scopes=scope_sets, giver_offerings=offering_sets, asked_scopes=scope_sets, asked_offerings=offering_sets)
def test_a_key_gives_exactly_what_it_holds_and_was_asked(giver_scopes, giver_offerings, asked_scopes, asked_offerings):
    service = OrganizerService(FakeOrganizerDirectory(), ManualClock(), lambda: b"unit-hash-key-0123456789")
    owner = service.authenticate(service.create("Acme")["api_key"])
    giver = service.authenticate(service.add_key(
        owner, "giver", sorted(giver_scopes) if giver_scopes else None,
        sorted(giver_offerings) if giver_offerings else None)["api_key"])
    holds = set(giver_scopes or SCOPES)
    allowed = set(asked_scopes or holds) <= holds and (
        giver_offerings is None or asked_offerings is None or asked_offerings <= giver_offerings)
    before = len(service.list_keys(owner))
    try:
        made = service.add_key(giver, "taker", sorted(asked_scopes) if asked_scopes else None,
                               sorted(asked_offerings) if asked_offerings else None)
    except Forbidden as refused:
        assert not allowed and refused.code in ("scope_not_held", "offering_not_held")
        assert len(service.list_keys(owner)) == before
        return
    assert allowed
    expected_scopes = set(asked_scopes or holds)
    expected_offerings = asked_offerings if asked_offerings is not None else giver_offerings
    assert set(made["scopes"]) == expected_scopes
    assert made["offerings"] == (sorted(expected_offerings) if expected_offerings is not None else None)
    taker = service.authenticate(made["api_key"])
    assert {scope for scope in SCOPES if taker.holds(scope)} == expected_scopes
    assert taker.offerings == (frozenset(expected_offerings) if expected_offerings is not None else None)
    assert taker.key_name == "taker"
