"""In-memory ``MailPolicy`` (holdfast/ports.py) for service tests: the items of
adapters/mail_policy_store.py under the same keys, in a ``fakes.MemoryTable``, answering as the
adapter does (tests/contract/storage/test_mail_policy.py holds the two to one contract)."""
from __future__ import annotations

from typing import Any

from tests.support.fakes import Item, MemoryTable, Write, _Fake, absent, always

PENDING, CONFIRMED = "pending", "confirmed"


class FakeMailPolicy(_Fake):
    def __init__(self, table: MemoryTable | None = None) -> None:
        super().__init__(table)

    def is_suppressed(self, address_key: str) -> bool:
        self.table.check_fault("is_suppressed")
        return self.table.get(f"MAIL#{address_key}", "SUPPRESSED") is not None

    def suppress(self, address_key: str, reason: str, at: str) -> bool:
        self.table.check_fault("suppress")
        item = {"pk": f"MAIL#{address_key}", "sk": "SUPPRESSED", "reason": reason, "at": at}
        return self.table.write((item["pk"], item["sk"]), absent, lambda _: item)

    def contact(self, customer_id: str, address_key: str) -> dict[str, Any] | None:
        self.table.check_fault("contact")
        item = self.table.get(f"CUSTOMER#{customer_id}", f"CONTACT#{address_key}")
        return None if item is None else {k: v for k, v in item.items() if k not in ("pk", "sk")}

    def request_confirmation(self, customer_id: str, address_key: str, token_hash: str, expires_at: str,
                             at: str) -> bool:
        self.table.check_fault("request_confirmation")
        item = {"pk": f"CUSTOMER#{customer_id}", "sk": f"CONTACT#{address_key}", "status": PENDING,
                "token_hash": token_hash, "expires_at": expires_at, "at": at}

        def open_or_lapsed(old: Item | None) -> bool:
            return old is None or (old.get("status") == PENDING and str(old.get("expires_at")) < at)
        return self.table.write((item["pk"], item["sk"]), open_or_lapsed, lambda _: item)

    def withdraw_confirmation(self, customer_id: str, address_key: str, token_hash: str) -> None:
        self.table.check_fault("withdraw_confirmation")
        self.table.write((f"CUSTOMER#{customer_id}", f"CONTACT#{address_key}"),
                         lambda old: old is not None and old.get("status") == PENDING
                         and old.get("token_hash") == token_hash, lambda _: None)

    def confirm_contact(self, customer_id: str, address_key: str, token_hash: str, now: str) -> bool:
        self.table.check_fault("confirm_contact")
        key = (f"CUSTOMER#{customer_id}", f"CONTACT#{address_key}")

        def pending_on_token(old: Item | None) -> bool:
            return old is not None and old.get("status") == PENDING and old.get("token_hash") == token_hash \
                and str(old.get("expires_at")) > now
        from holdfast.adapters.mail_policy_store import confirmed_outbox

        announcement = confirmed_outbox(customer_id, address_key, now)
        if not self.table.transact([
                Write("contact", key, pending_on_token, lambda old: {**old, "status": CONFIRMED, "confirmed_at": now}),
                Write("outbox", (announcement["pk"], announcement["sk"]), always, lambda _: dict(announcement))]):
            return True
        item = self.table.get(*key) or {}
        return item.get("status") == CONFIRMED and item.get("token_hash") == token_hash

    def pending_contacts(self, customer_id: str, now: str) -> int:
        self.table.check_fault("pending_contacts")
        return sum(1 for item in self.table.query(f"CUSTOMER#{customer_id}", prefix="CONTACT#")
                   if item.get("status") == PENDING and str(item.get("expires_at")) > now)

    def claim_new_address(self, customer_id: str, address_key: str, day: str, limit: int, expires: int) -> bool:
        self.table.check_fault("claim_new_address")
        key = (f"CUSTOMER#{customer_id}", f"NEWADDR#{day}")

        def room_or_known(old: Item | None) -> bool:
            return old is None or len(old.get("keys", set())) < limit or address_key in old.get("keys", set())

        def counted(old: Item | None) -> Item:
            old = old or {"pk": key[0], "sk": key[1]}
            return {**old, "keys": set(old.get("keys", set())) | {address_key}, "ttl": expires}
        return self.table.write(key, room_or_known, counted)

    def own_contact(self, customer_id: str, address_key: str, at: str) -> None:
        self.table.check_fault("own_contact")
        item = {"pk": f"CUSTOMER#{customer_id}", "sk": f"CONTACT#{address_key}", "status": CONFIRMED,
                "via": "identity", "at": at, "confirmed_at": at}
        self.table.write((item["pk"], item["sk"]), always, lambda _: item)

    def count_send(self, address_key: str, hour: str, dedup_id: str, limit: int, expires: int) -> bool:
        self.table.check_fault("count_send")
        key = (f"MAIL#{address_key}", f"RATE#{hour}")

        def room_and_new(old: Item | None) -> bool:
            return old is None or (old.get("sent", 0) < limit and dedup_id not in old.get("ids", set()))

        def counted(old: Item | None) -> Item:
            old = old or {"pk": key[0], "sk": key[1]}
            return {**old, "sent": old.get("sent", 0) + 1, "ids": set(old.get("ids", set())) | {dedup_id},
                    "ttl": expires}
        if self.table.write(key, room_and_new, counted):
            return True
        return dedup_id in ((self.table.get(*key) or {}).get("ids") or set())
