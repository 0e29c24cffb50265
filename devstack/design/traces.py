"""Recording the notebook's traces: the steps it takes, merged by time with the bookings' journals
(read back over the HTTP API) and the payment sandbox's delivery log; shown as a sequence diagram
beside a timeline table."""
from __future__ import annotations

import html
from datetime import datetime, timedelta, timezone

from devstack.design import sequence


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse(moment: str) -> datetime:
    return datetime.fromisoformat(moment.replace("Z", "+00:00"))


#: Section 3.10's car leaves by the gate's clock this long after its entry: 130 billable minutes after
#: the lot's 10 grace minutes, three started hours, ten minutes from the next hour either way.
OVERSTAY_STAY = timedelta(minutes=140)
OVERSTAY_PAST_TO = timedelta(minutes=80)


def overstay_exit(entered_at: datetime, window_to: datetime) -> datetime:
    """The gate-clock moment of 3.10's first exit: at least 80 minutes past the reservation's `to`,
    and counted from the ticket's entry, so the first exit (owing) and the paid exit two minutes
    later bill the same started hours whatever the wall clock read at the entry. Counted from `to`
    alone, an entry 10 to 12 minutes past the half hour billed two hours at the first exit and
    three at the second, which then owed another hour and stayed shut."""
    return max(window_to + OVERSTAY_PAST_TO, entered_at + OVERSTAY_STAY)


def short(value):
    return value[:8] if isinstance(value, str) and len(value) > 20 else value


# Tables wrap their cells and scroll sideways inside their own box rather than widen the page.
TABLE_BOX = "overflow-x:auto;max-width:100%;margin:0.4em 0"
CELL = ("text-align:left;vertical-align:top;white-space:normal;overflow-wrap:break-word;max-width:26em;"
        "padding:2px 6px")


def table_html(head: list[str], body: list[list], caption: str = "") -> str:
    cells = "".join(f"<th style='{CELL}'>{html.escape(str(h))}</th>" for h in head)
    rows = "".join("<tr>" + "".join(f"<td style='{CELL}'>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                   for row in body)
    title = (f"<caption style='text-align:left;white-space:nowrap'><b>{html.escape(caption)}</b></caption>"
             if caption else "")
    return (f"<div style='{TABLE_BOX}'><table style='font-size:85%;border-collapse:collapse'>{title}"
            f"<tr>{cells}</tr>{rows}</table></div>")


class Record:
    """Every event, booking and trace the notebook made, for the invariant checks at the end."""

    def __init__(self, api, sandbox):
        self.api, self.sandbox = api, sandbox
        self.events: dict[str, dict] = {}
        self.bookings: dict[str, dict] = {}   # booking_id -> {"customer", "event_id", "trace"}
        self.traces: dict[str, Trace] = {}
        self.parking: dict[str, dict] = {}    # parking reservations: booking_id -> {"customer", "lot_id", "trace"}

    def full(self, booking_id: str) -> dict:
        """The organizer's view of a booking: every journal entry, the reconciler's checks included
        (the customer's view leaves internal checks and operators' notes out)."""
        answer = self.api.request("GET", f"/admin/bookings/{booking_id}", organizer=True)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def trace(self, name: str) -> "Trace":
        self.traces[name] = Trace(self, name)
        return self.traces[name]


class Trace:
    """One scenario: the steps the notebook takes (as customer, provider page, operator...), the
    bookings' whole journals (GET /admin/bookings/{id}) and the sandbox's delivery log, merged by time."""

    def __init__(self, record: Record, name: str):
        self.record, self.name = record, name
        self.t0, self.steps, self.bookings, self.payments = now_iso(), [], [], []

    def step(self, actor: str, text: str, at: str | None = None) -> None:
        self.steps.append({"at": at or now_iso(), "actor": actor, "event": text})

    def event(self, **overrides) -> dict:
        event = self.record.api.create_event(**overrides)
        self.record.events[event["event_id"]] = event
        return event

    def book(self, event: dict, who: str, quantity: int = 1, key: str | None = None):
        sent = now_iso()  # the request is drawn when it was sent, before what it caused
        answer = self.record.api.book(event["event_id"], who, {"quantity": quantity}, key=key)
        body = answer.json()
        outcome = body.get("status") or body["error"]["code"]
        self.step(who, f"POST /events/…/bookings → {answer.status_code} {outcome}", at=sent)
        if answer.status_code == 201:
            booking_id = body["booking_id"]
            if booking_id not in self.record.bookings:
                self.record.bookings[booking_id] = {"customer": who, "event_id": event["event_id"],
                                                    "trace": self.name}
                self.bookings.append(booking_id)
        return answer

    def service(self, **overrides) -> dict:
        """An appointment service on a hall of its own (the API's defaults: Europe/Moscow, 09-21)."""
        hall = self.record.api.create_resource()
        service = self.record.api.create_service([hall["resource_id"]], **overrides)
        return service | {"resource_id": hall["resource_id"]}

    def book_slot(self, service: dict, who: str, starts_at: str, key: str | None = None):
        sent = now_iso()
        answer = self.record.api.book_slot(service["service_id"], who,
                                           {"starts_at": starts_at, "resource_id": service["resource_id"]}, key=key)
        body = answer.json()
        outcome = body.get("status") or body["error"]["code"]
        self.step(who, f"POST /services/…/bookings {starts_at[11:16]} local → {answer.status_code} {outcome}", at=sent)
        if answer.status_code == 201 and body["booking_id"] not in self.record.bookings:
            self.record.bookings[body["booking_id"]] = {"customer": who, "event_id": service["service_id"],
                                                        "trace": self.name, "service": True}
            self.bookings.append(body["booking_id"])
        return answer

    def choose(self, booking_id: str, who: str, body: dict, key: str | None = None):
        """The customer's decision of a conflict case (POST /bookings/{id}/resolution)."""
        sent = now_iso()
        answer = self.record.api.request("POST", f"/bookings/{booking_id}/resolution", customer=who,
                                         key=key or f"choice-{booking_id}", json=body)
        view = answer.json()
        outcome = view.get("status") or view["error"]["code"]
        when = body.get("starts_at", "")
        what = body["choice"] + (f" {when[11:16]} {'UTC' if when.endswith('Z') else 'local'}" if when else "")
        self.step(who, f"POST /bookings/…/resolution ({what}) → {answer.status_code} {outcome}", at=sent)
        return answer

    def pay(self, booking_id: str, who: str, key: str | None = None):
        sent = now_iso()
        answer = self.record.api.pay(booking_id, who, key=key)
        body = answer.json()
        outcome = f"{body.get('status') or body['error']['code']} {short(body.get('payment_id') or '')}"
        self.step(who, f"POST /bookings/…/payment → {answer.status_code} {outcome}".strip(), at=sent)
        if answer.status_code == 201 and body["payment_id"] not in self.payments:
            self.payments.append(body["payment_id"])
        return answer

    def reserve(self, lot: dict, who: str, body: dict, key: str | None = None, note: str = ""):
        """A parking reservation (POST /lots/{id}/reservations); kept apart from the event bookings
        of section 4's I1-I8, its lifecycle goes on past CONFIRMED (CHECKED_IN, COMPLETED)."""
        sent = now_iso()
        answer = self.record.api.request("POST", f"/lots/{lot['lot_id']}/reservations", customer=who,
                                         key=key or f"reserve-{who}", json=body)
        view = answer.json()
        outcome = view.get("status") or view["error"]["code"]
        window = f"{body['from'][11:16]}-{body['to'][11:16]} UTC"
        self.step(who, f"{note}POST /lots/…/reservations {window} → {answer.status_code} {outcome}"
                       + (f" space {view['space_id']} {view['amount']['value']}" if answer.status_code == 201 else ""),
                  at=sent)
        if answer.status_code == 201 and view["booking_id"] not in self.record.parking:
            self.record.parking[view["booking_id"]] = {"customer": who, "lot_id": lot["lot_id"], "trace": self.name}
            self.bookings.append(view["booking_id"])
        return answer

    def gate_pass(self, lot: dict, gate: dict, direction: str, body: dict, at: datetime | None = None) -> dict:
        """A pass through a lot's gate: over HTTP (the gate route, at the system's clock) or, with
        `at`, through the same code (`wiring.apply_gate_pass`, what the route calls) at the gate's
        clock moved forward, so an overstay of an hour takes no hour."""
        sent = now_iso()
        if at is None:
            answer = self.record.api.request("POST", f"/lots/{lot['lot_id']}/gates/{gate['gate_id']}/{direction}",
                                             headers={"X-Gate-Key": gate["gate_key"]}, json=body)
            assert answer.status_code == 200, answer.text
            result, how = answer.json(), f"POST /lots/…/gates/…/{direction} → 200"
        else:
            from holdfast.products.parking import wiring

            result = wiring.apply_gate_pass(lot["lot_id"], gate["gate_id"], {**body, "kind": direction}, at=at, offline=False)
            how = f"{direction} at gate clock {at.strftime('%H:%M')} UTC →"
        what = "token" if "token" in body else "ticket" if "ticket_id" in body else "plate"
        if direction == "entry":
            outcome = (f"gate_open, ticket {short(result['ticket_id'])}, space {result['space_id']}"
                       if result["gate_open"] else f"refused: {result['reason']}")
        elif result["exit_granted"]:
            outcome = "granted" + (f" ({result['reason']})" if result["reason"] else "")
        else:
            due = result["amount_due"]
            outcome = (f"owes {due['value']} {due['currency']}: exit_granted false, amount_due, confirmation_url"
                       if due else f"refused: {result['reason']}")
        repeat = "repeat: " if any(f"[{body['event_id']}," in step["event"] for step in self.steps) else ""
        self.step("gate", f"{repeat}{how} {outcome} [{body['event_id']}, by {what}]", at=sent)
        return result

    def provider(self, text: str) -> None:
        self.step("provider (sandbox)", text)

    def rows(self) -> list[dict]:
        sandbox = self.record.sandbox
        rows = [dict(step, source="step") for step in self.steps]
        for booking_id in self.bookings:
            booking = self.record.full(booking_id)
            pid = (booking.get("payment") or {}).get("payment_id")
            if pid and pid not in self.payments:
                self.payments.append(pid)
            for entry in booking["journal"]:
                ids = {k: short(v) for k, v in entry["ids"].items() if k not in ("booking_id", "event_id")}
                rows.append({"at": entry["at"], "actor": entry["actor"], "event": entry["action"],
                             "before": entry["from_status"] or "∅", "after": entry["to_status"],
                             "decision": entry["decision"],
                             "journal": f"{entry['decision']} {ids if ids else ''}".strip(),
                             "booking": short(booking_id), "source": "journal"})
        # non-zero once the sandbox's clock was moved
        shift = parse(sandbox.clock()["now"]) - datetime.now(timezone.utc)
        for pid in self.payments:
            for d in sandbox.deliveries(object_id=pid):
                at = parse(d["at"])
                if abs(shift.total_seconds()) > 60 and at - datetime.now(timezone.utc) > shift / 2:
                    at -= shift  # shown in real time; the sandbox's own clock runs ahead by `shift`
                rows.append({"at": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                             "actor": "provider → webhook",
                             "event": f"{d['event']} attempt {d['attempt']}"
                                      + (f" copy {d['copy']}" if d["copy"] else "")
                                      + (" (forged)" if d["forged"] else ""),
                             "journal": f"delivery {d['outcome']}"
                                        + (f", HTTP {d['status_code']}" if d["status_code"] else ""),
                             "source": "delivery"})
        return sorted(rows, key=lambda r: (r["at"], r["source"] != "step"))

    def seconds(self, row: dict) -> float:
        return (parse(row["at"]) - parse(self.t0)).total_seconds()

    def timeline(self, rows: list[dict]) -> str:
        head = ["t (s)", "actor", "event", "booking", "state before → after",
                "journal entry / delivery outcome"]
        body = [[f"{self.seconds(r):+.2f}", r["actor"], r["event"], r.get("booking", ""),
                 f"{r['before']} → {r['after']}" if "after" in r else "", r.get("journal", "")]
                for r in rows]
        return table_html(head, body, caption=f"Trace: {self.name}, timeline")

    def diagram(self, rows: list[dict]) -> tuple[str, int]:
        drawn = sequence.arrows(rows, self.seconds, several_bookings=len(self.bookings) > 1)
        return sequence.svg(drawn, title=f"Trace: {self.name}, sequence"), sequence.width_of(drawn)

    def html(self) -> str:
        rows = self.rows()
        picture, width = self.diagram(rows)
        # Side by side where the page has room for the diagram at its own size and the table;
        # otherwise the table goes under it, so the diagram's 11px text is never scaled down to
        # fit beside the table.
        return ("<div style='display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start'>"
                f"<div style='flex:1 1 {width}px;max-width:{width}px;min-width:0'>{picture}</div>"
                f"<div style='flex:1 1 520px;min-width:0'>{self.timeline(rows)}</div></div>")
