"""Webhook notifications: a background worker that delivers, logs and redelivers.

Never called inside API request handling: the API thread only enqueues. Network I/O happens on
the worker threads without the state lock held. One worker (the default) delivers one notification
at a time, in due order; more workers (`workers`) deliver several at once, as a real provider does
under load, so their arrival order is no longer the queue's.
"""
from __future__ import annotations

import http.client
import json
import logging
import ssl
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from .clock import iso
from .faults import FaultRegistry
from .models import CANCELLATION_REASONS, EVENTS, invalid, new_id

log = logging.getLogger("paysandbox.webhooks")


@dataclass
class Job:
    id: str
    notification_id: str
    url: str
    event: str
    object_id: str
    body: bytes
    first_at: datetime
    next_at: datetime
    order: int
    generation: int
    attempt: int = 1
    forged: bool = False
    copy: int = 0


def forge_object(obj: dict, event: str, now_iso: str) -> dict:
    """A notification object that claims ``event`` whatever the real state is."""
    forged = json.loads(json.dumps(obj))
    if event == "refund.succeeded":
        if "payment_id" not in forged:  # forging a refund for a payment
            forged = {"id": new_id(), "payment_id": obj["id"], "status": "succeeded",
                      "created_at": now_iso, "amount": obj["amount"]}
        forged["status"] = "succeeded"
        return forged
    status = event.split(".", 1)[1]
    forged["status"] = status
    forged.pop("confirmation", None)
    if status in ("succeeded", "waiting_for_capture"):
        forged["paid"] = True
        forged.pop("cancellation_details", None)
    if status == "succeeded":
        forged.setdefault("captured_at", now_iso)
        forged.setdefault("refunded_amount", {"value": "0.00", "currency": forged["amount"]["currency"]})
        forged["refundable"] = True
    if status == "canceled":
        forged["cancellation_details"] = {"party": CANCELLATION_REASONS["general_decline"],
                                          "reason": "general_decline"}
    return forged


class Notifier:
    def __init__(self, lock, clock, faults: FaultRegistry, *, urls=(), source_address="127.0.0.1",
                 timeout: float = 5.0, window_seconds: float = 86400, base_seconds: float = 10,
                 max_interval_seconds: float = 3600, workers: int = 1):
        if workers < 1:
            raise ValueError("at least one webhook worker is required")
        self.workers = int(workers)
        self.lock = lock
        self.cond = threading.Condition(lock)
        self.clock = clock
        self.faults = faults
        self.initial_urls = list(urls)
        self.source_address = source_address
        self.timeout = timeout
        self.window = timedelta(seconds=window_seconds)
        self.base_seconds = base_seconds
        self.max_interval_seconds = max_interval_seconds
        self.generation = 0
        self._threads: list[threading.Thread] = []
        self._stopping = False
        self._in_flight = 0
        clock.add_listener(self.wake)
        self.reset()

    # -- state ---------------------------------------------------------------------------------
    def reset(self) -> None:
        with self.cond:
            self.generation += 1
            self.urls = list(self.initial_urls)
            self.queue: list[Job] = []
            self.held: list[Job] = []
            self.log: list[dict] = []
            self.notifications: list[dict] = []
            self._order = 0
            self.cond.notify_all()

    def wake(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def set_urls(self, urls: list[str]) -> list[str]:
        for url in urls:
            if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") \
                    or not urlsplit(url).hostname:
                raise invalid("webhook URLs must be http(s) URLs", "urls")
        with self.lock:
            self.urls = list(urls)
            return list(self.urls)

    def _next_order(self) -> int:
        self._order += 1
        return self._order

    # -- producing -----------------------------------------------------------------------------
    def enqueue(self, events, forged: bool = False) -> None:
        if not events:
            return
        with self.cond:
            now = self.clock.now()
            for event, obj in events:
                is_forged = forged
                note_id = new_id()
                self.notifications.append({"notification_id": note_id, "event": event,
                                           "object_id": obj.get("id"), "at": iso(now),
                                           "forged": is_forged})
                fired = {f.kind: f for f in self.faults.pick_webhook(
                    {"drop_forever", "forge", "delay", "duplicate", "hold"}, event, obj)}
                if "drop_forever" in fired:
                    self._record(None, now, note_id=note_id, event=event, object_id=obj.get("id"),
                                 outcome="dropped_forever")
                    continue
                if "forge" in fired and not is_forged:
                    event = fired["forge"].params["event"]
                    obj = forge_object(obj, event, iso(now))
                    is_forged = True
                body = json.dumps({"type": "notification", "event": event, "object": obj},
                                  ensure_ascii=False).encode("utf-8")
                due = now
                if "delay" in fired:
                    due = now + timedelta(seconds=float(fired["delay"].params["seconds"]))
                copies = 1 + (fired["duplicate"].params["count"] if "duplicate" in fired else 0)
                for url in self.urls:
                    for copy in range(copies):
                        job = Job(id=new_id(), notification_id=note_id, url=url, event=event,
                                  object_id=obj.get("id", ""), body=body, first_at=now, next_at=due,
                                  order=self._next_order(), generation=self.generation,
                                  forged=is_forged, copy=copy)
                        if "hold" in fired:
                            self.held.append(job)
                            self._record(job, now, outcome="held")
                        else:
                            self.queue.append(job)
            self.cond.notify_all()

    def forge(self, current: dict, event: str) -> dict:
        if event not in EVENTS:
            raise invalid(f"event must be one of {list(EVENTS)}", "event")
        obj = forge_object(current, event, iso(self.clock.now()))
        self.enqueue([(event, obj)], forged=True)
        return obj

    def release(self, match: dict | None = None, order: str = "fifo") -> int:
        if order not in ("fifo", "lifo"):
            raise invalid("order must be fifo or lifo", "order")
        match = match or {}
        with self.cond:
            now = self.clock.now()
            chosen = [j for j in self.held
                      if (not match.get("event") or j.event == match["event"])
                      and (not match.get("object_id") or match["object_id"] in
                           (j.object_id, json.loads(j.body)["object"].get("payment_id")))]
            self.held = [j for j in self.held if j not in chosen]
            if order == "lifo":
                chosen.reverse()
            for job in chosen:
                job.next_at = now
                job.order = self._next_order()
                self.queue.append(job)
            self.cond.notify_all()
            return len(chosen)

    # -- inspection ----------------------------------------------------------------------------
    def deliveries(self, event: str | None = None, object_id: str | None = None) -> list[dict]:
        with self.lock:
            return [dict(e) for e in self.log
                    if (not event or e["event"] == event) and (not object_id or e["object_id"] == object_id)]

    def status(self) -> dict:
        with self.lock:
            return {"urls": list(self.urls), "queued": len(self.queue), "held": len(self.held),
                    "in_flight": self._in_flight, "source_address": self.source_address,
                    "held_items": [{"delivery_id": j.id, "event": j.event, "object_id": j.object_id,
                                    "url": j.url} for j in self.held]}

    def _record(self, job: Job | None, at: datetime, *, outcome: str, status_code=None, error=None,
                note_id=None, event=None, object_id=None) -> None:
        self.log.append({
            "delivery_id": job.id if job else None,
            "notification_id": job.notification_id if job else note_id,
            "attempt": job.attempt if job else 0,
            "at": iso(at),
            "url": job.url if job else None,
            "event": job.event if job else event,
            "object_id": job.object_id if job else object_id,
            "status_code": status_code,
            "error": error,
            "outcome": outcome,
            "forged": job.forged if job else False,
            "copy": job.copy if job else 0,
        })

    # -- worker --------------------------------------------------------------------------------
    def start(self) -> None:
        self._stopping = False
        self._threads = [threading.Thread(target=self._run, name=f"paysandbox-webhooks-{n}", daemon=True)
                         for n in range(self.workers)]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        with self.cond:
            self._stopping = True
            self.cond.notify_all()
        for thread in self._threads:
            thread.join(timeout=self.timeout + 2)
        self._threads = []

    def _run(self) -> None:
        while True:
            with self.cond:
                if self._stopping:
                    return
                now = self.clock.now()
                due = sorted((j for j in self.queue if j.next_at <= now), key=lambda j: (j.next_at, j.order))
                if not due:
                    wait = 0.2
                    if self.queue:
                        nearest = min(j.next_at for j in self.queue)
                        wait = min(wait, self.clock.real_seconds((nearest - now).total_seconds()))
                    self.cond.wait(timeout=max(wait, 0.005))
                    continue
                job = due[0]
                self.queue.remove(job)
                self._in_flight += 1
                dropped = bool(self.faults.pick_webhook({"drop_once"}, job.event,
                                                        json.loads(job.body)["object"]))
            try:
                if dropped:
                    code, error = None, "dropped by fault drop_once"
                else:
                    code, error = self._send(job)
            except Exception as exc:  # never let the worker die
                code, error = None, f"{type(exc).__name__}"
            with self.cond:
                self._in_flight -= 1
                if job.generation != self.generation:
                    continue
                now = self.clock.now()
                if code == 200:
                    self._record(job, now, outcome="delivered", status_code=code)
                    continue
                delay = min(self.base_seconds * (2 ** (job.attempt - 1)), self.max_interval_seconds)
                next_at = now + timedelta(seconds=delay)
                if next_at - job.first_at > self.window:
                    self._record(job, now, outcome="gave_up", status_code=code, error=error)
                    continue
                self._record(job, now, outcome="retry_scheduled", status_code=code, error=error)
                job.attempt += 1
                job.next_at = next_at
                self.queue.append(job)

    def _send(self, job: Job) -> tuple[int | None, str | None]:
        parts = urlsplit(job.url)
        source = (self.source_address, 0) if self.source_address else None
        if parts.scheme == "https":
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            conn = http.client.HTTPSConnection(parts.hostname, parts.port or 443, timeout=self.timeout,
                                               source_address=source, context=ctx)
        else:
            conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=self.timeout,
                                              source_address=source)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        try:
            conn.request("POST", path, body=job.body,
                         headers={"Content-Type": "application/json; charset=utf-8",
                                  "User-Agent": "YooKassa-Sandbox-Notifier/1.0"})
            resp = conn.getresponse()
            resp.read()
            log.info("webhook %s %s -> %s (attempt %d)", job.event, job.object_id, resp.status, job.attempt)
            return resp.status, None
        except OSError as exc:
            log.info("webhook %s %s -> %s (attempt %d)", job.event, job.object_id,
                     type(exc).__name__, job.attempt)
            return None, f"{type(exc).__name__}: {exc}"[:200]
        finally:
            conn.close()
