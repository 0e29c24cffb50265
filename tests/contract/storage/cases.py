"""Shared by the store parts' cases: a ``Change`` of items committed or refused, and the contract
every product's operator cases keep (parking's gate cases, events' check-in
cases): listed while open, oldest first, without keys; resolved once, with the resolution and its
journal entry; a missing case is not made; a case id is put once."""
from __future__ import annotations

from typing import Any, Callable

import pytest

from holdfast.ports import Change, StaleBooking

from .bookings import AT


def commit(store, *items) -> None:
    store.commit(Change(items=tuple(items)))


def refused(store, *items) -> str:
    """The labels a change of ``items`` alone was refused with (it must be refused)."""
    with pytest.raises(StaleBooking) as failed:
        commit(store, *items)
    return str(failed.value)


OPENED = (("late", "2030-01-01T12:05:00.000Z"), ("early", "2030-01-01T12:00:00.000Z"),
          ("middle", "2030-01-01T12:01:00.000Z"))


def check_cases(backend, ids, *, case_of: Callable[[str, str], dict[str, Any]], put: str, get: str, resolve: str,
                listing: str, resolved_action: str, key_pk: str | None = None) -> None:
    """``case_of(name, opened_at)`` makes a case; ``put``, ``get``, ``resolve``, ``listing`` name the
    store's members for the product's cases; ``key_pk`` the case item's partition key (its open
    index must leave it once resolved)."""
    store = backend.store
    cases = [case_of(name, opened) for name, opened in OPENED]
    for case in cases:
        commit(store, getattr(store, put)(case))
    mine = {case["case_id"] for case in cases}

    def open_ones():
        return [c for c in getattr(store, listing)(None, 100, None)[0] if c["case_id"] in mine]   # one page

    assert [c["case_id"] for c in open_ones()] == [ids("early"), ids("middle"), ids("late")]
    assert open_ones()[0] == cases[1]                                       # no keys, as written
    assert getattr(store, get)(ids("late")) == cases[0]
    entry = {"at": AT, "actor": "ops", "action": resolved_action, "decision": "done"}
    resolution = {"resolution": "done", "operator": "ops", "note": "seen to", "at": AT}
    assert getattr(store, resolve)(ids("middle"), resolution, entry) is True
    done = getattr(store, get)(ids("middle"))
    assert (done["status"], done["resolution"]) == ("RESOLVED", resolution)
    assert done["journal"] == [*cases[2]["journal"], entry] and "gsi1pk" not in done
    if key_pk is not None:
        assert "gsi1pk" not in backend.raw(key_pk.format(case_id=ids("middle")), "META")
    assert [c["case_id"] for c in open_ones()] == [ids("early"), ids("late")]
    assert getattr(store, resolve)(ids("middle"), {**resolution, "operator": "bob"}, entry) is False
    assert getattr(store, get)(ids("middle")) == done
    assert getattr(store, resolve)(ids("nothing"), resolution, entry) is False
    assert getattr(store, get)(ids("nothing")) is None                     # nothing made
    assert refused(store, getattr(store, put)({**cases[0], "reason": "other"})) == "case"
