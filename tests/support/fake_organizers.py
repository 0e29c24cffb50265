"""The ``OrganizerDirectory`` port in memory (adapters/organizers_store.py keeps the same items
under the same keys): the organizer in the shared ``ORGANIZERS`` partition, each live key under
its organizer, and the lookup by the key's hash. A key's two items and the organizer's
``key_count`` change together, so the count is the number of live keys. tests/contract/storage/
holds it to the adapter on moto and DynamoDB Local.

What only the adapter does: a touch that DynamoDB throttles is dropped there (a service test of
that stays on moto); here a touch never meets a busy table.

Test code only: the deployed package (layers/) never imports this module.
"""
from __future__ import annotations

from typing import Any

from holdfast.domain.fiscal import FiscalSettings
from holdfast.ports import ItemExists
from tests.support.fakes import Item, Write, _Fake, _set, absent, always, present

DIRECTORY = "ORGANIZERS"


def _strip(item: Item) -> Item:
    return {name: value for name, value in item.items() if name not in ("pk", "sk")}


class FakeOrganizerDirectory(_Fake):
    """``OrganizerDirectory``."""

    @staticmethod
    def _key_writes(organizer_id: str, key: dict[str, Any]) -> list[Write]:
        stored_key = {"key_id": key["key_id"], "created_at": key["created_at"], "key_hash": key["key_hash"]}
        lookup = {"organizer_id": organizer_id, "key_id": key["key_id"], "key_hash": key["key_hash"]}
        return [Write("key", (f"ORGANIZER#{organizer_id}", f"KEY#{key['key_id']}"), absent,
                      lambda _: stored_key),
                Write("lookup", (f"APIKEY#{key['key_hash']}", "KEY"), absent, lambda _: lookup)]

    def put_organizer(self, organizer: dict[str, Any], key: dict[str, Any]) -> None:
        self.table.check_fault("put_organizer")
        organizer_id = organizer["organizer_id"]
        writes = [Write("organizer", (DIRECTORY, f"ORG#{organizer_id}"), absent,
                        lambda _: {**organizer, "key_count": 1})]
        if self.table.transact(writes + self._key_writes(organizer_id, key)):
            raise ItemExists(organizer_id)

    def get_organizer(self, organizer_id: str) -> dict[str, Any] | None:
        self.table.check_fault("get_organizer")
        item = self.table.get(DIRECTORY, f"ORG#{organizer_id}")
        return _strip(item) if item else None

    def list_organizers(self) -> list[dict[str, Any]]:
        self.table.check_fault("list_organizers")
        return [_strip(item) for item in self.table.query(DIRECTORY, prefix="ORG#")]

    def set_organizer_status(self, organizer_id: str, status: str, at: str) -> bool:
        self.table.check_fault("set_organizer_status")
        return self.table.write((DIRECTORY, f"ORG#{organizer_id}"), present,
                                _set({"status": status, "status_changed_at": at}))

    def key_owner(self, key_hash: str) -> dict[str, Any] | None:
        self.table.check_fault("key_owner")
        item = self.table.get(f"APIKEY#{key_hash}", "KEY")
        return _strip(item) if item else None

    def organizer_keys(self, organizer_id: str) -> list[dict[str, Any]]:
        self.table.check_fault("organizer_keys")
        keys = []
        for item in self.table.query(f"ORGANIZER#{organizer_id}", prefix="KEY#"):
            lookup = self.table.get(f"APIKEY#{item['key_hash']}", "KEY") or {}
            keys.append({"key_id": item["key_id"], "created_at": item["created_at"],
                         "last_used_at": lookup.get("last_used_at")})
        return sorted(keys, key=lambda key: (key["created_at"], key["key_id"]))

    def add_key(self, organizer_id: str, key: dict[str, Any], max_keys: int) -> bool:
        self.table.check_fault("add_key")

        def room(item: Item | None) -> bool:
            return item is not None and "key_count" in item and item["key_count"] < max_keys

        count = Write("organizer", (DIRECTORY, f"ORG#{organizer_id}"), room,
                      lambda item: {**item, "key_count": item["key_count"] + 1})
        failed = self.table.transact([count] + self._key_writes(organizer_id, key))
        if "key" in failed or "lookup" in failed:
            raise ItemExists(key["key_id"])
        return not failed

    def delete_key(self, organizer_id: str, key_id: str) -> str:
        self.table.check_fault("delete_key")
        item = self.table.get(f"ORGANIZER#{organizer_id}", f"KEY#{key_id}")
        if item is None:
            return "missing"

        def not_last(organizer: Item | None) -> bool:
            return organizer is not None and "key_count" in organizer and organizer["key_count"] > 1

        failed = self.table.transact([
            Write("organizer", (DIRECTORY, f"ORG#{organizer_id}"), not_last,
                  lambda organizer: {**organizer, "key_count": organizer["key_count"] - 1}),
            Write("key", (f"ORGANIZER#{organizer_id}", f"KEY#{key_id}"), present, lambda _: None),
            Write("lookup", (f"APIKEY#{item['key_hash']}", "KEY"), always, lambda _: None),
        ])
        if not failed:
            return "deleted"
        return "missing" if "key" in failed else "last"

    def touch_key(self, key_hash: str, at: str, unless_since: str) -> None:
        self.table.check_fault("touch_key")

        def stale(item: Item | None) -> bool:
            return item is not None and ("last_used_at" not in item or item["last_used_at"] < unless_since)

        self.table.write((f"APIKEY#{key_hash}", "KEY"), stale, _set({"last_used_at": at}))

    def get_fiscal(self, organizer_id: str) -> FiscalSettings | None:
        self.table.check_fault("get_fiscal")
        item = self.table.get(f"ORGANIZER#{organizer_id}", "FISCAL")
        return FiscalSettings.from_item(item) if item else None

    def put_fiscal(self, organizer_id: str, settings: FiscalSettings, at: str) -> None:
        self.table.check_fault("put_fiscal")
        self.table.write((f"ORGANIZER#{organizer_id}", "FISCAL"), always,
                         lambda _: {**settings.as_item(), "updated_at": at})

    def delete_fiscal(self, organizer_id: str) -> bool:
        self.table.check_fault("delete_fiscal")
        return self.table.write((f"ORGANIZER#{organizer_id}", "FISCAL"), present, lambda _: None)
