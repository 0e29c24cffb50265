"""Resources: a resource is written once and read back as it was written."""
from __future__ import annotations

from decimal import Decimal

import pytest

from holdfast.ports import ItemExists


def resource(resource_id: str, name: str = "Room 1") -> dict:
    return {"resource_id": resource_id, "name": name, "time_zone": "Europe/Moscow", "capacity": 3,
            "hours": {"mon": [["09:00", "18:00"]], "sun": []}, "active": True, "note": None}


def test_a_resource_reads_back_without_its_keys_and_numbers_as_decimal(backend, ids):
    backend.resources.put_resource(resource(ids("room")))
    found = backend.resources.get_resource(ids("room"))
    assert found == resource(ids("room"))
    assert isinstance(found["capacity"], Decimal)
    assert backend.resources.get_resource(ids("nothing")) is None


def test_a_taken_id_is_item_exists_and_the_first_stays(backend, ids):
    backend.resources.put_resource(resource(ids("room")))
    with pytest.raises(ItemExists):
        backend.resources.put_resource(resource(ids("room"), name="Other"))
    assert backend.resources.get_resource(ids("room"))["name"] == "Room 1"


def test_a_float_is_refused_before_anything_is_written(backend, ids):
    with pytest.raises(TypeError):
        backend.resources.put_resource({**resource(ids("room")), "capacity": 1.5})
    assert backend.resources.get_resource(ids("room")) is None


def test_an_organizers_resources_are_listed_oldest_first_and_only_its_own(backend, ids):
    mine, other = ids("org"), ids("other")
    backend.resources.put_resource({**resource(ids("late")), "organizer_id": mine, "created_at": "2026-12-07T10:00:01.000Z"})
    backend.resources.put_resource({**resource(ids("early")), "organizer_id": mine, "created_at": "2026-12-07T10:00:00.000Z"})
    backend.resources.put_resource({**resource(ids("theirs")), "organizer_id": other, "created_at": "2026-12-07T10:00:00.000Z"})
    backend.resources.put_resource(resource(ids("nobodys")))
    listed = backend.resources.owned_resources(mine)
    assert [found["resource_id"] for found in listed] == [ids("early"), ids("late")]
    assert listed[0] == {**resource(ids("early")), "organizer_id": mine, "created_at": "2026-12-07T10:00:00.000Z"}
    # a repeat of a creation (the same id refused) adds no second entry
    with pytest.raises(ItemExists):
        backend.resources.put_resource({**resource(ids("late")), "organizer_id": mine, "created_at": "2026-12-07T10:00:01.000Z"})
    assert len(backend.resources.owned_resources(mine)) == 2
    assert backend.resources.owned_resources(ids("nobody")) == []
