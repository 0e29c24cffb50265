"""Organizers and their API keys (services/organizers.py): an organizer is written once with its
first key; a key's items and the organizer's key count change together, the count is what keeps
the last key; a key's last use is recorded only when older than the time given."""
from __future__ import annotations

import inspect

import pytest

from holdfast import ports
from holdfast.adapters.organizers_store import OrganizerStore
from holdfast.ports import ItemExists
from tests.support.fake_organizers import FakeOrganizerDirectory

AT = "2030-01-01T12:00:00.000Z"


@pytest.fixture
def directory(backend):
    """On the backend's table: the fake's shares the in-memory one, the adapter the DynamoDB one."""
    if backend.name == "fake":
        return FakeOrganizerDirectory(backend.store.table)
    return OrganizerStore(backend.store.table, backend.store.client)


def key(ids, name: str, created_at: str = AT) -> dict:
    return {"key_id": ids(name), "key_hash": ids(f"hash-{name}"), "created_at": created_at}


def organizer(ids, name: str = "org") -> dict:
    return {"organizer_id": ids(name), "name": name.title(), "status": "active", "created_at": AT}


def test_an_organizer_is_written_once_with_its_first_key(backend, directory, ids):
    acme, first = organizer(ids, "acme"), key(ids, "k1")
    directory.put_organizer(acme, first)
    assert directory.get_organizer(acme["organizer_id"]) == {**acme, "key_count": 1}
    assert directory.key_owner(first["key_hash"]) == {
        "organizer_id": acme["organizer_id"], "key_id": first["key_id"], "key_hash": first["key_hash"]}
    pk = f"ORGANIZER#{acme['organizer_id']}"
    assert backend.raw(pk, f"KEY#{first['key_id']}") == {"pk": pk, "sk": f"KEY#{first['key_id']}", **first}
    with pytest.raises(ItemExists):                                  # the id again, with a new key
        directory.put_organizer({**acme, "name": "Again"}, key(ids, "k2"))
    assert directory.key_owner(key(ids, "k2")["key_hash"]) is None
    assert directory.get_organizer(acme["organizer_id"])["name"] == "Acme"
    thief = organizer(ids, "thief")
    with pytest.raises(ItemExists):                                  # a new id with a taken key
        directory.put_organizer(thief, first)
    assert directory.get_organizer(thief["organizer_id"]) is None
    assert directory.key_owner(first["key_hash"])["organizer_id"] == acme["organizer_id"]
    assert directory.get_organizer(ids("nobody")) is None and directory.key_owner(ids("no-hash")) is None


def test_organizers_are_listed_by_id(directory, ids):
    made = [organizer(ids, name) for name in ("cat", "ann", "ben")]
    for one in made:
        directory.put_organizer(one, key(ids, f"key-{one['name']}"))
    mine = {one["organizer_id"] for one in made}
    listed = [found for found in directory.list_organizers() if found["organizer_id"] in mine]
    assert listed == sorted(({**one, "key_count": 1} for one in made), key=lambda one: one["organizer_id"])


def test_a_status_is_set_on_an_organizer_that_exists(directory, ids):
    acme = organizer(ids, "acme")
    directory.put_organizer(acme, key(ids, "k1"))
    assert directory.set_organizer_status(acme["organizer_id"], "suspended", AT) is True
    found = directory.get_organizer(acme["organizer_id"])
    assert (found["status"], found["status_changed_at"], found["key_count"]) == ("suspended", AT, 1)
    assert directory.set_organizer_status(ids("nobody"), "suspended", AT) is False
    assert directory.get_organizer(ids("nobody")) is None


def test_keys_are_added_up_to_the_cap_and_a_taken_key_is_refused(backend, directory, ids):
    acme = organizer(ids, "acme")
    first = key(ids, "k1")
    directory.put_organizer(acme, first)
    second = key(ids, "k2", "2030-01-01T12:00:01.000Z")
    assert directory.add_key(acme["organizer_id"], second, 2) is True
    third = key(ids, "k3")
    assert directory.add_key(acme["organizer_id"], third, 2) is False           # at the cap: nothing written
    assert directory.key_owner(third["key_hash"]) is None
    assert backend.raw(f"ORGANIZER#{acme['organizer_id']}", f"KEY#{third['key_id']}") is None
    with pytest.raises(ItemExists):                                             # a hash another key has
        directory.add_key(acme["organizer_id"], {**third, "key_hash": first["key_hash"]}, 5)
    assert directory.get_organizer(acme["organizer_id"])["key_count"] == 2
    assert directory.add_key(ids("nobody"), key(ids, "k4"), 5) is False
    assert directory.key_owner(key(ids, "k4")["key_hash"]) is None
    listed = directory.organizer_keys(acme["organizer_id"])
    assert [k["key_id"] for k in listed] == [first["key_id"], second["key_id"]]


def test_a_key_is_deleted_with_its_lookup_and_the_last_one_is_kept(directory, ids):
    acme, other = organizer(ids, "acme"), organizer(ids, "other")
    first, second = key(ids, "k1"), key(ids, "k2")
    directory.put_organizer(acme, first)
    directory.put_organizer(other, key(ids, "k-other"))
    directory.add_key(acme["organizer_id"], second, 5)
    assert directory.delete_key(other["organizer_id"], first["key_id"]) == "missing"   # not its key
    assert directory.delete_key(acme["organizer_id"], first["key_id"]) == "deleted"
    assert directory.key_owner(first["key_hash"]) is None
    assert directory.get_organizer(acme["organizer_id"])["key_count"] == 1
    assert directory.delete_key(acme["organizer_id"], first["key_id"]) == "missing"
    assert directory.delete_key(acme["organizer_id"], second["key_id"]) == "last"
    assert directory.key_owner(second["key_hash"])["key_id"] == second["key_id"]
    assert directory.get_organizer(acme["organizer_id"])["key_count"] == 1
    assert [k["key_id"] for k in directory.organizer_keys(acme["organizer_id"])] == [second["key_id"]]


def test_a_touch_records_the_use_only_when_the_last_is_older(backend, directory, ids):
    acme, first = organizer(ids, "acme"), key(ids, "k1")
    directory.put_organizer(acme, first)
    assert directory.organizer_keys(acme["organizer_id"])[0]["last_used_at"] is None
    directory.touch_key(first["key_hash"], "2030-01-01T12:00:00.000Z", "2030-01-01T11:59:00.000Z")
    directory.touch_key(first["key_hash"], "2030-01-01T12:00:30.000Z", "2030-01-01T11:59:30.000Z")   # recent
    assert directory.key_owner(first["key_hash"])["last_used_at"] == "2030-01-01T12:00:00.000Z"
    directory.touch_key(first["key_hash"], "2030-01-01T12:01:01.000Z", "2030-01-01T12:00:01.000Z")
    assert directory.organizer_keys(acme["organizer_id"])[0]["last_used_at"] == "2030-01-01T12:01:01.000Z"
    directory.touch_key(ids("no-hash"), AT, AT)                                 # a deleted key: nothing made
    assert backend.raw(f"APIKEY#{ids('no-hash')}", "KEY") is None


def test_the_fake_has_every_member_of_the_port_with_the_same_parameters():
    port, fake = ports.OrganizerDirectory, FakeOrganizerDirectory
    for member in sorted(port.__protocol_attrs__):
        assert hasattr(fake, member), f"{fake.__name__} lacks {port.__name__}.{member}"
        wanted = [p for p in inspect.signature(getattr(port, member)).parameters if p != "self"]
        found = [p for p in inspect.signature(getattr(fake, member)).parameters if p != "self"]
        assert found == wanted, f"{fake.__name__}.{member}{found} is not {port.__name__}.{member}{wanted}"


def test_fiscal_settings_are_replaced_whole_and_turned_off(backend, directory, ids):
    from holdfast.domain.fiscal import FiscalSettings

    acme = organizer(ids, "acme")
    directory.put_organizer(acme, key(ids, "k1"))
    assert directory.get_fiscal(acme["organizer_id"]) is None
    first = FiscalSettings(2, 1, "service", ((ids("offering"), 4),))
    directory.put_fiscal(acme["organizer_id"], first, AT)
    assert directory.get_fiscal(acme["organizer_id"]) == first
    second = FiscalSettings(1, 11)
    directory.put_fiscal(acme["organizer_id"], second, AT)
    assert directory.get_fiscal(acme["organizer_id"]) == second       # the overrides went with the old ones
    assert [k["key_id"] for k in directory.organizer_keys(acme["organizer_id"])] == [ids("k1")]
    assert directory.delete_fiscal(acme["organizer_id"]) is True
    assert directory.get_fiscal(acme["organizer_id"]) is None
    assert directory.delete_fiscal(acme["organizer_id"]) is False
