"""Organizers and their keys (services/organizers.py over the in-memory directory, which
tests/contract/storage holds to the adapter): keys shown once and stored as their keyed hash, 401
for every key that no longer counts, the last key kept, and last use recorded without a write on
every call. A throttled touch is the adapter's to drop: that case runs it on moto."""
from __future__ import annotations

import pytest

from holdfast.adapters.organizers_store import OrganizerStore
from holdfast.domain.errors import Conflict, NotFound, Unauthorized
from holdfast.domain.organizers import MAX_KEYS_PER_ORGANIZER, Caller
from holdfast.services.organizers import OrganizerService
from tests.support.fake_organizers import FakeOrganizerDirectory

HASH_KEY = b"unit-hash-key-0123456789"


@pytest.fixture
def directory(request):
    if request.node.get_closest_marker("on_moto") is not None:
        store = request.getfixturevalue("store")
        return OrganizerStore(store.table, store.client)
    return FakeOrganizerDirectory()


@pytest.fixture
def organizers(directory, clock):
    return OrganizerService(directory, clock, lambda: HASH_KEY)


def table_text(directory) -> str:
    return repr(directory.table.items)


def test_a_new_organizer_gets_a_key_once_and_the_table_keeps_only_its_keyed_hash(organizers, directory):
    made = organizers.create("Acme")
    assert made["api_key"].startswith("hk_") and len(made["api_key"]) > 40
    assert organizers.authenticate(made["api_key"]) == Caller(made["organizer_id"], made["key_id"])
    assert made["api_key"] not in table_text(directory)
    # hashed under the deployment's secret: the same key under another secret finds nothing
    other = OrganizerService(organizers.store, organizers.clock, lambda: b"another-hash-key-0123456")
    with pytest.raises(Unauthorized):
        other.authenticate(made["api_key"])
    listed = organizers.list()
    assert [(o["organizer_id"], o["status"], o["key_count"]) for o in listed] == [(made["organizer_id"], "active", 1)]
    assert "api_key" not in listed[0]


@pytest.mark.parametrize("key", [None, "", "hk_unknown-key-of-nobody", "x" * 300])
def test_a_missing_or_unknown_key_is_401(organizers, key):
    organizers.create("Acme")
    with pytest.raises(Unauthorized):
        organizers.authenticate(key)


def test_a_suspended_organizer_keys_are_401_until_it_is_resumed(organizers):
    made = organizers.create("Acme")
    assert organizers.suspend(made["organizer_id"])["status"] == "suspended"
    assert organizers.suspend(made["organizer_id"])["status"] == "suspended"   # a repeat changes nothing
    with pytest.raises(Unauthorized):
        organizers.authenticate(made["api_key"])
    organizers.resume(made["organizer_id"])
    assert organizers.authenticate(made["api_key"]).organizer_id == made["organizer_id"]
    with pytest.raises(NotFound) as missing:
        organizers.suspend("no-such-organizer")
    assert missing.value.code == "organizer_not_found"


def test_a_deleted_key_is_401_and_the_last_key_cannot_be_deleted(organizers):
    made = organizers.create("Acme")
    first = organizers.authenticate(made["api_key"])
    with pytest.raises(Conflict) as last:
        organizers.delete_key(first, first.key_id)
    assert last.value.code == "last_key"
    second = organizers.add_key(first)
    assert organizers.authenticate(second["api_key"]).key_id == second["key_id"]
    organizers.delete_key(first, first.key_id)
    with pytest.raises(Unauthorized):
        organizers.authenticate(made["api_key"])
    me = organizers.me(organizers.authenticate(second["api_key"]))
    assert [key["key_id"] for key in me["keys"]] == [second["key_id"]] and me["key_count"] == 1
    with pytest.raises(NotFound) as gone:   # a repeat: the key is no longer there
        organizers.delete_key(first, first.key_id)
    assert gone.value.code == "key_not_found"


def test_an_organizer_deletes_only_its_own_keys(organizers):
    acme, other = organizers.create("Acme"), organizers.create("Other")
    other_caller = organizers.authenticate(other["api_key"])
    organizers.add_key(other_caller)
    with pytest.raises(NotFound):
        organizers.delete_key(other_caller, acme["key_id"])
    assert organizers.authenticate(acme["api_key"]).organizer_id == acme["organizer_id"]


def test_keys_per_organizer_are_capped(organizers):
    caller = organizers.authenticate(organizers.create("Acme")["api_key"])
    for _ in range(MAX_KEYS_PER_ORGANIZER - 1):
        organizers.add_key(caller)
    with pytest.raises(Conflict) as capped:
        organizers.add_key(caller)
    assert capped.value.code == "too_many_keys"


def test_last_use_is_written_at_most_once_a_minute(organizers, clock, directory, monkeypatch):
    made = organizers.create("Acme")
    writes = []
    touch = directory.touch_key
    monkeypatch.setattr(directory, "touch_key", lambda *args: writes.append(args) or touch(*args))
    caller = organizers.authenticate(made["api_key"])
    first = organizers.me(caller)["keys"][0]["last_used_at"]
    clock.advance(30)
    for _ in range(5):
        organizers.authenticate(made["api_key"])
    assert len(writes) == 1 and organizers.me(caller)["keys"][0]["last_used_at"] == first
    clock.advance(31)
    organizers.authenticate(made["api_key"])
    assert len(writes) == 2 and organizers.me(caller)["keys"][0]["last_used_at"] > first


def test_an_imported_key_is_refused_when_taken(organizers):
    organizers.create("Demo", api_key="local-organizer-key", organizer_id="org-demo")
    with pytest.raises(Conflict):
        organizers.create("Thief", api_key="local-organizer-key")
    assert organizers.authenticate("local-organizer-key").organizer_id == "org-demo"
    assert [o["name"] for o in organizers.list()] == ["Demo"]


@pytest.mark.on_moto("the adapter drops a throttled write; the fake is never throttled")
def test_a_throttled_last_use_write_never_fails_the_request(organizers, store):
    from botocore.exceptions import ClientError

    made = organizers.create("Acme")

    class Throttled:
        def __getattr__(self, name):
            return getattr(store.client, name)

        def update_item(self, **kwargs):
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "UpdateItem")

    organizers.store.client = Throttled()
    assert organizers.authenticate(made["api_key"]).organizer_id == made["organizer_id"]
