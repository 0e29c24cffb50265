"""Webhooks: an organizer's endpoints (registered, listed, deleted, tested), the deliveries made of
the facts the engine publishes, and each delivery's attempts (docs/api.md, "Webhooks").

A webhook is one more consumer of the notifications bus: ``publish`` takes one outbox event as
the bus delivered it, finds its organizer's endpoints that chose it and makes one delivery for
each (its id derived from the endpoint and the fact, so a repeated fact makes none), each sent to
the queue of attempts. ``attempt`` takes one message of that queue: it posts the delivery's body,
signed, to the endpoint's checked address; a failure stores the next moment and sends the
message again with the queue's delay, until 24 hours from the first attempt, when the delivery is
``failed`` (dead-lettered) and waits for a redelivery by hand. Nothing of this runs in a sale:
the sale wrote its outbox event and is done.

A delivery's ``generation`` counts its redeliveries: a message of an older generation (the chain
of attempts a redelivery replaced) finds the delivery moved on and does nothing.
"""
from __future__ import annotations

import secrets
import uuid
from typing import Any, Callable, Iterable

from ..clock import iso
from ..domain import webhooks as rules
from ..domain.errors import Conflict, NotFound
from ..domain.organizers import Caller
from ..observability import logger
from ..ports import Clock, EventReads, WebhookAttempts, WebhookStore, WebhookTransport
from .listing import decode_cursor, encode_cursor, page_limit

PAGE_SIZE = 100
DEFAULT_PAGE = 50
TIMEOUT_SECONDS = 10.0
PUBLIC_FIELDS = ("webhook_id", "url", "events", "description", "created_at")


class WebhookService:
    def __init__(self, store: WebhookStore, offerings: EventReads, clock: Clock, key: Callable[[], bytes],
                 attempts: WebhookAttempts | None, transport: WebhookTransport, local_networks: Iterable[Any] = (),
                 window_seconds: int = rules.RETRY_WINDOW_SECONDS) -> None:
        self.store = store
        self.offerings = offerings
        self.clock = clock
        self.key = key
        self.attempts = attempts
        self.transport = transport
        self.local_networks = tuple(local_networks)
        self.window_seconds = window_seconds

    # ----------------------------------------------------------------------- the endpoints

    def create(self, caller: Caller, url: str, events: Iterable[str], description: str | None = None) -> dict[str, Any]:
        rules.check_url(url, self.local_networks)
        chosen = rules.check_event_types(events)
        webhook = {"webhook_id": "wh_" + uuid.uuid4().hex, "url": url, "events": list(chosen),
                   "description": description or "", "created_at": iso(self.clock()),
                   "created_by": caller.key_id, "salt": secrets.token_hex(16)}
        if not self.store.add_webhook(caller.organizer_id, webhook, rules.MAX_WEBHOOKS):
            raise Conflict(f"An organizer has at most {rules.MAX_WEBHOOKS} webhooks.", code="too_many_webhooks")
        return {**_public(webhook), "secret": self._secret(webhook)}

    def list(self, caller: Caller) -> list[dict[str, Any]]:
        return [_public(webhook) for webhook in self.store.list_webhooks(caller.organizer_id)]

    def delete(self, caller: Caller, webhook_id: str) -> None:
        if not self.store.delete_webhook(caller.organizer_id, webhook_id):
            raise _webhook_not_found()

    def test(self, caller: Caller, webhook_id: str) -> dict[str, Any]:
        webhook = self._own(caller, webhook_id)
        now = self.clock()
        fact = {"type": rules.TEST_EVENT, "event_id": None, "at": iso(now), "version": 0,
                "reason": f"test {uuid.uuid4().hex[:12]}"}
        event_id = "evt_" + uuid.uuid4().hex
        delivery = self._deliver(webhook, caller.organizer_id, event_id, rules.TEST_EVENT, fact)
        return {"delivery_id": delivery, "event_id": event_id}

    def deliveries(self, caller: Caller, webhook_id: str, limit: int | str | None = None,
                   cursor: str | None = None) -> dict[str, Any]:
        self._own(caller, webhook_id)
        size = page_limit(limit, PAGE_SIZE) if limit not in (None, "") else DEFAULT_PAGE
        partition = f"WEBHOOK#{webhook_id}#DELIVERIES"
        after = decode_cursor(cursor, partition, "", "\uffff")["sk"] if cursor else None
        found, following = self.store.delivery_page(webhook_id, size, after)
        return {"deliveries": [_shown(d) for d in found],
                "next_cursor": encode_cursor(partition, following) if following else None}

    def redeliver(self, caller: Caller, webhook_id: str, delivery_id: str) -> dict[str, Any]:
        webhook = self._own(caller, webhook_id)
        for _ in range(3):
            delivery = self.store.get_delivery(webhook["webhook_id"], delivery_id)
            if delivery is None:
                raise NotFound("No such delivery of this webhook.", code="delivery_not_found")
            generation = int(delivery.get("generation") or 0)
            now = self.clock()
            changes = {"status": "pending", "generation": generation + 1, "window_attempts": 0,
                       "window_started_at": int(now.timestamp()), "next_attempt_at": iso(now)}
            if self.store.update_delivery(webhook_id, delivery_id, generation, changes):
                self._send({"webhook_id": webhook_id, "organizer_id": caller.organizer_id,
                            "delivery_id": delivery_id, "generation": generation + 1})
                return _shown({**delivery, **changes})
        raise Conflict("The delivery changed meanwhile; try again.", code="booking_changed")

    # ----------------------------------------------------------------------- the facts

    def publish(self, fact: dict[str, Any]) -> int:
        """One fact from the bus: a delivery for each endpoint of its organizer that chose it; the
        number made (0 for a repeat, or a fact no endpoint hears)."""
        event_type = rules.event_type_of(str(fact.get("type", "")))
        offering_id = str(fact.get("event_id") or "")
        if event_type is None or not offering_id:
            return 0
        offering = self.offerings.get_event(offering_id) or {}
        organizer_id = offering.get("organizer_id")
        if not organizer_id:
            return 0
        endpoints = [w for w in self.store.list_webhooks(str(organizer_id)) if event_type in (w.get("events") or ())]
        if not endpoints:
            return 0
        event_id = rules.fact_id(fact)
        return sum(1 for webhook in endpoints
                   if self._deliver(webhook, str(organizer_id), event_id, event_type, fact, repeat_ok=True))

    def _deliver(self, webhook: dict[str, Any], organizer_id: str, event_id: str, event_type: str,
                 fact: dict[str, Any], repeat_ok: bool = False) -> str | None:
        now = self.clock()
        delivery_id = rules.delivery_id(webhook["webhook_id"], event_id)
        delivery = {"delivery_id": delivery_id, "webhook_id": webhook["webhook_id"], "organizer_id": organizer_id,
                    "event_id": event_id, "type": event_type, "status": "pending", "attempts": 0,
                    "window_attempts": 0, "generation": 0, "created_at": iso(now),
                    "window_started_at": int(now.timestamp()), "next_attempt_at": iso(now),
                    "body": rules.body(event_id, event_type, organizer_id, iso(now), fact)}
        if not self.store.add_delivery(delivery):
            known = self.store.get_delivery(webhook["webhook_id"], delivery_id)
            # made before, but its first attempt may never have been queued (a crash between the
            # two): queue it again; an attempt more is what at-least-once allows
            if not (known and known.get("status") == "pending" and not known.get("attempts")):
                return None
        self._send({"webhook_id": webhook["webhook_id"], "organizer_id": organizer_id, "delivery_id": delivery_id,
                    "generation": 0})
        return delivery_id

    def _send(self, message: dict[str, Any], due: int | None = None) -> None:
        if self.attempts is None:
            raise RuntimeError("WEBHOOK_ATTEMPTS_QUEUE_URL is not set: this function cannot queue deliveries")
        now = int(self.clock().timestamp())
        if due is not None:
            message = {**message, "due": due}
        self.attempts.send(message, max(0, (due or now) - now))

    # ----------------------------------------------------------------------- the attempts

    def attempt(self, message: dict[str, Any]) -> str:
        """One message of the queue of attempts; what became of it (for the log)."""
        now = self.clock()
        due = message.get("due")
        if due is not None and int(due) > now.timestamp():
            self._send(dict(message), int(due))      # the queue's delay is 15 minutes at most: on again
            return "waiting"
        webhook_id, delivery_id = str(message["webhook_id"]), str(message["delivery_id"])
        generation = int(message.get("generation") or 0)
        delivery = self.store.get_delivery(webhook_id, delivery_id)
        if delivery is None or delivery.get("status") != "pending" or int(delivery.get("generation") or 0) != generation:
            return "stale"
        webhook = self.store.get_webhook(str(message["organizer_id"]), webhook_id)
        if webhook is None:
            self.store.update_delivery(webhook_id, delivery_id, generation, {"status": "dropped"})
            return "dropped"
        status_code, error = self._post(webhook, delivery)
        attempts = int(delivery.get("attempts") or 0) + 1
        window_attempts = int(delivery.get("window_attempts") or 0) + 1
        last = {"at": iso(now), "status_code": status_code, "error": error}
        if status_code is not None and 200 <= status_code < 300:
            self.store.update_delivery(webhook_id, delivery_id, generation, {
                "status": "delivered", "attempts": attempts, "window_attempts": window_attempts,
                "delivered_at": iso(now), "last_attempt": last, "next_attempt_at": None})
            return "delivered"
        delay = rules.next_delay(window_attempts, int(delivery.get("window_started_at") or now.timestamp()),
                                 now.timestamp(), self.window_seconds)
        if delay is None:
            self.store.update_delivery(webhook_id, delivery_id, generation, {
                "status": "failed", "attempts": attempts, "window_attempts": window_attempts, "last_attempt": last,
                "next_attempt_at": None})
            logger.warning("webhook delivery dead-lettered", extra={"webhook_id": webhook_id, "delivery_id": delivery_id,
                                                                   "attempts": attempts})
            return "failed"
        due_at = int(now.timestamp()) + delay
        if self.store.update_delivery(webhook_id, delivery_id, generation, {
                "attempts": attempts, "window_attempts": window_attempts, "last_attempt": last,
                "next_attempt_at": iso(now.fromtimestamp(due_at, now.tzinfo))}):
            self._send({"webhook_id": webhook_id, "organizer_id": message["organizer_id"], "delivery_id": delivery_id,
                        "generation": generation}, due_at)
        return "retrying"

    def _post(self, webhook: dict[str, Any], delivery: dict[str, Any]) -> tuple[int | None, str | None]:
        """The status code of one POST, or the reason there was none. The name is resolved now and
        every address it gives is checked; the connection goes to the checked address."""
        try:
            target = rules.check_url(str(webhook["url"]), self.local_networks)
        except Exception:  # noqa: BLE001 - an endpoint registered under other rules
            return None, "url_not_allowed"
        if target.literal:
            addresses = [target.host]
        elif target.host == "localhost":
            addresses = ["127.0.0.1"]
        elif self.local_networks:    # a development stack asks no outside resolver (check_addresses)
            return None, "outside_local_networks"
        else:
            addresses = self.transport.resolve(target.host, target.port)
        try:
            address = rules.check_addresses(target, addresses, self.local_networks)
        except ValueError as exc:
            return None, str(exc)
        body = str(delivery["body"]).encode()
        timestamp = int(self.clock().timestamp())
        headers = {"Content-Type": "application/json", "User-Agent": "Holdfast-Webhooks/1",
                   rules.DELIVERY_HEADER: str(delivery["delivery_id"]), rules.EVENT_TYPE_HEADER: str(delivery["type"]),
                   rules.SIGNATURE_HEADER: rules.signature_header(self._secret(webhook), timestamp, body)}
        try:
            return self.transport.post(target.scheme, target.host, target.port, target.path, address, headers, body,
                                       TIMEOUT_SECONDS), None
        except OSError as exc:
            return None, _reason(exc)

    # ----------------------------------------------------------------------- helpers

    def _own(self, caller: Caller, webhook_id: str) -> dict[str, Any]:
        webhook = self.store.get_webhook(caller.organizer_id, webhook_id)
        if webhook is None:
            raise _webhook_not_found()
        return webhook

    def _secret(self, webhook: dict[str, Any]) -> str:
        return rules.derive_secret(self.key(), str(webhook["webhook_id"]), str(webhook["salt"]))


def _public(webhook: dict[str, Any]) -> dict[str, Any]:
    return {name: webhook.get(name) for name in PUBLIC_FIELDS}


def _shown(delivery: dict[str, Any]) -> dict[str, Any]:
    return {"delivery_id": delivery["delivery_id"], "event_id": delivery.get("event_id"), "type": delivery.get("type"),
            "status": delivery.get("status"), "attempts": int(delivery.get("attempts") or 0),
            "created_at": delivery.get("created_at"), "next_attempt_at": delivery.get("next_attempt_at"),
            "delivered_at": delivery.get("delivered_at"), "last_attempt": delivery.get("last_attempt")}


def _reason(exc: OSError) -> str:
    text = str(exc) or type(exc).__name__
    return text if text.isidentifier() else type(exc).__name__


def _webhook_not_found() -> NotFound:
    return NotFound("No such webhook of this organizer.", code="webhook_not_found")
