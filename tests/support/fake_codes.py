"""The codes part of the table in memory (adapters/code_store.py's items and semantics), shared
with the fake booking store's table so that a hold's claims on a code's counters find them.

Test code only: the deployed package (layers/) never imports this module."""
from __future__ import annotations

import hashlib
from typing import Any

from holdfast.adapters.code_store import definition_key, uses
from holdfast.adapters.inventory_store import pool_key
from holdfast.domain.codes import COMPS_POOL, UNLIMITED, allowance_pool, code_pool
from holdfast.ports import ItemExists
from tests.support.fakes import Item, MemoryTable, Write, _Fake, absent


def _key(key: dict[str, str]) -> tuple[str, str]:
    return key["pk"], key["sk"]


def _counter(offering_id: str, capacity: int) -> dict[str, Any]:
    return {"event_id": offering_id, "capacity": capacity, "available": capacity, "held": 0, "sold": 0}


class FakeCodes(_Fake):
    def __init__(self, table: MemoryTable | None = None) -> None:
        super().__init__(table)

    def put_code(self, offering_id: str, code: dict[str, Any]) -> None:
        self.table.check_fault("put_code")
        capacity = int(code.get("max_uses") or UNLIMITED)
        failed = self.table.transact([
            Write("code", _key(definition_key(offering_id, code["code"])), absent,
                  lambda _: {**code, "offering_id": offering_id}),
            Write("counter", _key(pool_key(offering_id, code_pool(code["code"]))), absent,
                  lambda _: _counter(offering_id, capacity)),
        ])
        if failed:
            raise ItemExists(code["code"])

    def get_code(self, offering_id: str, code: str) -> dict[str, Any] | None:
        self.table.check_fault("get_code")
        return self.table.get(*_key(definition_key(offering_id, code)))

    def list_codes(self, offering_id: str) -> list[dict[str, Any]]:
        found = self.table.query(f"EVENT#{offering_id}", prefix="CODE#")
        for item in found:
            item["uses"] = uses(self.table.get(*_key(pool_key(offering_id, code_pool(item["code"])))))
        return found

    def end_code(self, offering_id: str, code: str, at: str) -> bool:
        return self.table.write(_key(definition_key(offering_id, code)), lambda item: item is not None,
                                lambda item: {**(item or {}), "ended_at": (item or {}).get("ended_at") or at})

    def ensure_allowance(self, offering_id: str, code: str, customer_id: str, per_customer: int) -> None:
        self.table.check_fault("ensure_allowance")
        self.table.write(_key(pool_key(offering_id, allowance_pool(code, customer_id))), absent,
                         lambda _: _counter(offering_id, per_customer))

    def ensure_comps(self, offering_id: str) -> None:
        self.table.check_fault("ensure_comps")
        self.table.write(_key(pool_key(offering_id, COMPS_POOL)), absent, lambda _: _counter(offering_id, UNLIMITED))

    def comps_given(self, offering_id: str) -> int:
        counter = self.table.get(*_key(pool_key(offering_id, COMPS_POOL)))
        return int((counter or {}).get("sold", 0))

    def count_code_try(self, customer_id: str, minute: str, limit: int, now_epoch: int) -> bool:
        digest = hashlib.sha256(customer_id.encode()).hexdigest()[:20]

        def below(item: Item | None) -> bool:
            return item is None or int(item.get("tries", 0)) < limit

        return self.table.write((f"CODETRIES#{digest}", minute), below,
                                lambda item: {**(item or {}), "tries": int((item or {}).get("tries", 0)) + 1})
