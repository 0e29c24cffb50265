"""Build docs/design.ipynb from the cells below, execute it against the real local system, save it.

    .venv/bin/python docs/build_notebook.py            # build, execute in place (with outputs)
    .venv/bin/python docs/build_notebook.py --html     # the same, then render docs/design.html
    .venv/bin/python docs/build_notebook.py --no-execute --out /tmp/x.ipynb   # only write the cells

The notebook starts its own embedded AWS stack and payment sandbox inside the kernel (loopback
only, ephemeral ports) and drives them; every table and check below is computed from that run.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "design.ipynb"
HTML = ROOT / "docs" / "design.html"
CELL_TIMEOUT = 120
#: What the notebook's cells are and draw from directly. `make notebook` records their digest in the
#: executed notebook's metadata; `make test` fails when the committed notebook was executed from
#: other inputs (tests/docs/test_design_notebook.py), instead of executing it again (86 s).
INPUTS = ("docs/build_notebook.py", "devstack/design", "layers/holdfast/holdfast/domain/statuses.py")

CELLS: list[tuple[str, str]] = []
#: Indexes into CELLS of the code cells whose code the HTML page shows: the invariant checks, which
#: are the claims themselves. Every other cell's code (setup, helpers, scenario scripts) is plumbing
#: to a reader: the page shows only its output, the notebook keeps it all.
SHOWN: set[int] = set()
HIDE_INPUT = "hide-input"


def md(text: str) -> None:
    CELLS.append(("md", text.strip("\n")))


def code(text: str, shown: bool = False) -> None:
    if shown:
        SHOWN.add(len(CELLS))
    CELLS.append(("code", text.strip("\n")))


# ================================================================================================
md(r"""
# Holdfast: the design, as executable evidence

This notebook is the design record of Holdfast's booking and payment flow. Nothing below is drawn by
hand: the state diagrams are drawn from `holdfast.domain.statuses.TRANSITIONS`, every trace is produced
by driving the real system (the template deployed on the embedded AWS stack, the real handlers,
queue, state machines, and the YooKassa-compatible payment sandbox) from this kernel, and every
invariant is asserted on those traces. If the code changes behaviour, re-running the notebook
changes the tables or fails an assertion. The helpers that record and draw live in `devstack/design/`
(local tooling, not deployed); the HTML page shows the code only of the invariant checks.

Rebuild: `make notebook` (executes in place), `make notebook-html` (also renders `docs/design.html`).
`make notebook` fails on any cell's error; `make test` fails when the committed notebook was executed
from other inputs than the current ones (`tests/docs/test_design_notebook.py`).

Contents: 1. the system under test · 2. state machines (diagrams and transition table) ·
3. traces · 4. invariants, each checked on the traces · 5. late payments: the options compared ·
6. what we assume about the provider, and what happens when it is wrong.
""")

md(r"""
## 1. The system under test

One sandbox and one local stack for the whole notebook. Timings are shortened **only through the
template's parameters**, the way the integration tests do it: holds of 3-4 s (per event,
`hold_ttl_seconds`), reconciliation checks after 1, 1, 2, 2... s (instead of 30 s, 1, 2, 5, 15, 30
min, hourly), a reconciliation limit of 12 s (instead of 24 h) and a provider key window of 16 s
(instead of 24 h). Everything else is the deployed code path.
""")

code(r"""
import os, sys, time, uuid
from collections import Counter
from pathlib import Path

ROOT = Path.cwd().resolve()
while not (ROOT / "template.yaml").exists():
    if ROOT.parent == ROOT:
        raise RuntimeError("run the notebook from inside the Holdfast repository")
    ROOT = ROOT.parent
os.chdir(ROOT)
for entry in (str(ROOT), str(ROOT / "layers" / "holdfast")):
    if entry not in sys.path:
        sys.path.insert(0, entry)
os.environ.pop("HOLDFAST_CRASH_POINTS", None)

from IPython.display import HTML, Markdown, display

from devstack.aws import EmbeddedStack, emf
from devstack.design import booking as booking_lifecycle, lifecycle, traces
from devstack.paysandbox import SandboxControl, SandboxServer
from holdfast import faults, wiring
from holdfast.domain.statuses import HOLDING, OCCUPYING, RELEASED, SOLD, TRANSITIONS, BookingStatus
from tests.support.api import BookingApi

# The key window outlasts the first reconciliation check, which runs at the end of the 5-second
# bucket its due time falls in (adapters/aws.py ReconciliationBuckets), so 3.5 shows the same-key path.
# The limit outlasts a 3 s hold's expiry, which also waits for its 5-second bucket to end (up to
# 8 s after the hold): at 8 s the two raced, and on a busy machine reconciliation's give-up
# (PAYMENT_FAILED) came before the expiry section 3.3 waits for.
LIMIT, KEY_WINDOW = 12, 16
STARTED = time.monotonic()
sandbox_server = SandboxServer(host="127.0.0.1", port=0)
sandbox_server.start()
stack = EmbeddedStack(str(ROOT), aws_port=0, api_port=0, parameters={
    "ProviderApiUrl": sandbox_server.base_url,
    "ReconcileScheduleSeconds": "1,1,2",
    "ReconcileLimitSeconds": str(LIMIT),
    "ProviderKeyRetentionSeconds": str(KEY_WINDOW),
    "ProviderTimeoutSeconds": "3",
    "SweepGraceSeconds": "1",
    "LogLevel": "ERROR",
})
stack.start()
from holdfast.observability import logger
logger.setLevel("WARNING")  # the handlers' INFO lines are the stack's own log, not this record's evidence
emf.set_echo(False)         # their metric lines too (kept in the local CloudWatch Logs)
wiring.reset()   # also forgets the secret cache
sandbox = SandboxControl(sandbox_server.control_url)
sandbox.set_webhooks([stack.api_url + "/webhooks/payments"])
api = BookingApi(stack.api_url)
print(f"API {stack.api_url}  sandbox {sandbox_server.base_url}  up in {time.monotonic() - STARTED:.1f} s")
""")

code(r"""
# Bookkeeping for the checks in section 4: every event, booking and trace made below.
record = traces.Record(api, sandbox)
EVENTS, BOOKINGS, TRACES = record.events, record.bookings, record.traces
Trace = record.trace
now_iso, parse, short = traces.now_iso, traces.parse, traces.short


def table(head: list[str], body: list[list], caption: str = "") -> None:
    display(HTML(traces.table_html(head, body, caption)))


def actions(booking: dict) -> list[str]:
    return [entry["action"] for entry in booking["journal"]]


def customer() -> str:
    return f"cust-{uuid.uuid4().hex[:8]}"


def wait_until(predicate, timeout: float = 15, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
""")

# ================================================================================================
md(r"""
## 2. State machines

### 2.1 The booking

Drawn from `TRANSITIONS` itself and laid out by Graphviz (`devstack/design/lifecycle.py`): every
allowed move is one arrow, labelled with the journal action(s) that make it, and coloured by who
moves it: **customer** (API), **provider** (a notification, re-read with `GET` before it is applied),
**timer** (the `HoldExpiry` execution, the sweeper as its backup), **reconciler** (the
`Reconciliation` execution and the sweeper), **operator** (`/admin/reviews`). An arrow in several
colours can be moved by any of them (most provider outcomes are also learned by the reconciler's
`GET`). The boxes group the statuses by what they do to capacity, from the sets in the same module:
**HOLDING** (`HELD`, `PAYMENT_PENDING`: the places count against capacity until the hold is released),
**SOLD** (`CONFIRMED`), **RELEASED** (every other status: the places are back in the pool). The
labels and initiators come from the transition table of 2.3, and drawing fails if that table and
`TRANSITIONS` disagree.
""")

code(r"""
booking_edges = lifecycle.edges(TRANSITIONS)
display(lifecycle.state_diagram(
    TRANSITIONS, booking_lifecycle.BOOKING_MOVES, "Booking statuses (TRANSITIONS)",
    groups={"HOLDING": HOLDING, "SOLD": SOLD, "RELEASED": RELEASED},
    group_colours={"HOLDING": "#fff3c4", "SOLD": "#d9f2d9", "RELEASED": "#e6eaf2"},
    ranks=[[BookingStatus.EXPIRED, BookingStatus.CANCELLED, BookingStatus.CONFIRMED]]))
print(f"{len(BookingStatus)} statuses, {len(booking_edges)} transitions;",
      "terminal:", [s.value for s, t in TRANSITIONS.items() if not t])
""")

md(r"""
**States an inventory kind adds after `CONFIRMED`.** A kind may declare more statuses
(`Kind.extra_states`, registered through `holdfast.domain.lifecycle.declare` when the kind is
registered), who may move a booking into each, and whether its places stay sold or go back on sale.
One diagram per kind is drawn from those declarations (`lifecycle.declared_lifecycles`), so a new
kind's states appear here without code of their own. Parking declares `CHECKED_IN` (the gate, on
entry with the token), `COMPLETED` (the gate, on a granted exit) and `NO_SHOW` (the timer, once the
no-show grace after `from` passed): each edge is labelled with the event the move announces and
what it does to the space, and coloured by who may make it. The trace of 3.10 walks
`CONFIRMED → CHECKED_IN → COMPLETED`.
""")

code(r"""
import holdfast.kinds  # registers the deployed kinds, and with them the states they declare

kind_lifecycles = lifecycle.declared_lifecycles()
assert "parking" in {found.kind for found in kind_lifecycles}, "parking declares CHECKED_IN, NO_SHOW, COMPLETED"
for found in kind_lifecycles:
    display(lifecycle.state_diagram(found.transitions, found.moves, f"After CONFIRMED: kind {found.kind}",
                                    groups=found.groups, label_boxes=True, group_labels_at="b",
                                    group_colours={"SOLD": "#d9f2d9", "RELEASED": "#e6eaf2"}))
print("declared by deployed kinds:", {found.kind: sorted(set(found.transitions) - {"CONFIRMED"}) for found in kind_lifecycles})
""")

md(r"""
### 2.2 The payment

The provider's payment has its own lifecycle (YooKassa's statuses), and our record of the attempt
(`Payment.state` in `holdfast/domain/booking.py`) has another. The code keeps no transition table
for them, so they are declared in `devstack/design/booking.py`, and section 4 checks the provider's
against every payment the sandbox reports during the traces.
""")

code(r"""
PROVIDER_PAYMENT, OUR_ATTEMPT = booking_lifecycle.PROVIDER_PAYMENT, booking_lifecycle.OUR_ATTEMPT
display(lifecycle.state_diagram(PROVIDER_PAYMENT, booking_lifecycle.PROVIDER_PAYMENT_MOVES,
                                "Provider payment (money moves only at succeeded)",
                                groups={"final": ["succeeded", "canceled"]}))
display(lifecycle.state_diagram(OUR_ATTEMPT, booking_lifecycle.OUR_ATTEMPT_MOVES, "Our record of the attempt (Payment.state)",
                                groups={"settled": ["CREATED", "REJECTED", "NOT_CREATED"]}))
""")

md(r"""
### 2.3 Every transition

The initiators are those of 2.1. Every row is one DynamoDB transaction that writes the booking (conditioned on the `version` it read),
the place move (conditioned on the counters or the seat), the journal entry and the outbox item. The
provider call is never inside it. The cell after the table asserts that the table and `TRANSITIONS`
name exactly the same moves, so neither can change alone.
""")

code(r"""
T = booking_lifecycle.BOOKING_MOVES
table(["from", "to", "action (journal)", "initiator", "condition checked", "data stored", "idempotency key", "a repeat"],
      [[m.source, m.target, m.action, m.initiator, m.condition, m.stored, m.key, m.repeat] for m in T],
      caption="Booking transitions")
table(["from = to", "action", "initiator", "what it records"], [list(row) for row in booking_lifecycle.SAME_STATUS],
      caption="Journal entries that do not change the status")
assert lifecycle.uncovered(TRANSITIONS, T) == (set(), set()), ("table and TRANSITIONS differ", lifecycle.uncovered(TRANSITIONS, T))
print(f"OK: the table covers exactly the {len(booking_edges)} transitions of TRANSITIONS")
""")

# ================================================================================================
md(r"""
## 3. Traces

Each trace drives the API as the customer would, and the sandbox as the customer's bank or the
provider would (pay on the payment page, faults on the provider's API or its notifications). The
table merges three sources by time: the notebook's own steps (what was called, and the answer), the
bookings' whole journals from the organizer's `GET /admin/bookings/{id}` (the customer's view leaves
out the reconciler's internal checks), and the sandbox's delivery log of notifications.
`t` is seconds since the trace started; a request is placed at the moment it was sent.

Each trace is drawn twice from those rows (`devstack/design/sequence.py`): as a sequence diagram, one
lane per participant (customer, API, the booking record the journal is written to, the queue and its
consumer, the hold timer, the reconciler, the provider), time down the page, each arrow carrying
what was asked or decided (a journal arrow: action, status change, and the decision in the entry);
and as the timeline table beside it. Dashed arrows: the customer on the provider's payment page,
or a notification the provider did not deliver (held back, dropped).

### 3.1 The happy path (and repeats of the customer's requests)
""")

code(r"""
tr = Trace("happy path")
ev = tr.event(capacity=3, hold_ttl_seconds=4)
alice = customer()
first = tr.book(ev, alice, 2, key="alice-hold-1")
again = tr.book(ev, alice, 2, key="alice-hold-1")             # a double click: same key, same body
clash = tr.book(ev, alice, 1, key="alice-hold-1")             # same key, another body
booking_id = first.json()["booking_id"]
pay1 = tr.pay(booking_id, alice, key="alice-pay-1")
pay2 = tr.pay(booking_id, alice, key="alice-pay-2")            # another tab: still one payment
payment_id = pay1.json()["payment_id"]
sandbox.pay(payment_id); tr.provider("customer presses Pay on the payment page: succeeded")
api.wait_status(booking_id, alice, "CONFIRMED")
display(HTML(tr.html()))
assert again.json()["booking_id"] == booking_id and again.headers.get("Idempotent-Replayed") == "true"
assert clash.status_code == 422 and clash.json()["error"]["code"] == "idempotency_key_reused"
assert pay2.json()["payment_id"] == payment_id and len(sandbox.find_payments(booking_id=booking_id)) == 1
print("counts:", api.counts(ev["event_id"]))
""")

md(r"""
### 3.2 Duplicated and reordered notifications

The sandbox sends four extra copies of `payment.succeeded`, holds them all back, then releases them
newest first. The webhook answers 200 to each; the FIFO queue and the consumer's `GET` plus
`judge_payment` make the confirmation happen once.
""")

code(r"""
tr = Trace("duplicate notifications")
ev = tr.event(capacity=2)
bob = customer()
booking_id = tr.book(ev, bob).json()["booking_id"]
payment_id = tr.pay(booking_id, bob).json()["payment_id"]
sandbox.add_fault("duplicate", count=4, match={"object_id": payment_id})
sandbox.add_fault("hold", times=5, match={"object_id": payment_id})
sandbox.pay(payment_id); tr.provider("paid; 1 + 4 copies of the notification held back")
time.sleep(0.5)
released = sandbox.release(order="lifo", object_id=payment_id); tr.provider(f"{released} held notifications released, newest first")
api.wait_status(booking_id, bob, "CONFIRMED")
wait_until(lambda: len([d for d in sandbox.deliveries(object_id=payment_id) if d["outcome"] == "delivered"]) >= 5,
           what="five deliveries")
time.sleep(1.0)
sandbox.clear_faults()
display(HTML(tr.html()))
final = api.booking(booking_id, bob)
assert actions(final).count("payment_succeeded") == 1
print("payment_succeeded entries:", actions(final).count("payment_succeeded"), "| counts:", api.counts(ev["event_id"]))
""")

md(r"""
### 3.3 A late payment, the places still free

The hold (3 s) runs out, the timer releases the place (`EXPIRED`), then the customer pays. The
place is still free, so it is taken again by one conditional move (`RETAKE`) and the booking is
confirmed.
""")

code(r"""
tr = Trace("late payment, place still free")
ev = tr.event(capacity=2, hold_ttl_seconds=3)
carol = customer()
booking_id = tr.book(ev, carol).json()["booking_id"]
payment_id = tr.pay(booking_id, carol).json()["payment_id"]
api.wait_status(booking_id, carol, "EXPIRED", timeout=15)
tr.step("notebook", f"counts after expiry: {api.counts(ev['event_id'])}")
sandbox.pay(payment_id); tr.provider("customer pays after the hold ran out: succeeded")
done = api.wait_status(booking_id, carol, "CONFIRMED")
display(HTML(tr.html()))
assert "late_payment_places_retaken" in actions(done)
assert api.counts(ev["event_id"]) == {"available": 1, "held": 0, "sold": 1}
""")

md(r"""
### 3.4 A late payment after resale: one-stage (refund) and two-stage (authorisation cancelled)

Capacity 1. The hold runs out, a rival books the place, then the first customer's payment
completes. One-stage: the money was taken after the deadline, so it goes back (`rf-<payment>-late`).
Two-stage: the payment only reached `waiting_for_capture`, so the authorisation is cancelled and no
money moves at all.
""")

code(r"""
tr = Trace("late payment after resale, one-stage")
ev = tr.event(capacity=1, hold_ttl_seconds=3)
dave, rival = customer(), customer()
booking_id = tr.book(ev, dave).json()["booking_id"]
payment_id = tr.pay(booking_id, dave).json()["payment_id"]
api.wait_status(booking_id, dave, "EXPIRED", timeout=15)
assert tr.book(ev, rival).status_code == 201
sandbox.pay(payment_id); tr.provider("customer pays after the place was resold: succeeded")
done = api.wait_status(booking_id, dave, "REFUNDED")
display(HTML(tr.html()))
LATE_ONE_STAGE = payment_id
refunds = sandbox.refunds(payment_id)
paid = sandbox.payment(payment_id)
assert len(refunds) == 1 and actions(done)[-2:] == ["late_payment_refund_started", "refund_succeeded"]
print(f"paid {paid['amount']['value']}, shop received {paid.get('income_amount', {}).get('value')} after the provider's fee, "
      f"refunded {refunds[0]['amount']['value']}; counts {api.counts(ev['event_id'])}")
""")

code(r"""
tr = Trace("late payment after resale, two-stage")
ev = tr.event(capacity=1, hold_ttl_seconds=3, payment_mode="two_stage")
erin, rival = customer(), customer()
booking_id = tr.book(ev, erin).json()["booking_id"]
payment_id = tr.pay(booking_id, erin).json()["payment_id"]
api.wait_status(booking_id, erin, "EXPIRED", timeout=15)
assert tr.book(ev, rival).status_code == 201
sandbox.pay(payment_id); tr.provider("customer authorises after the place was resold: waiting_for_capture")
api.wait_for(booking_id, erin, lambda b: "late_authorisation_cancelled" in actions(b), what="authorisation cancelled")
wait_until(lambda: sandbox.deliveries(object_id=payment_id, event="payment.canceled"), what="the canceled notification")
time.sleep(0.5)
display(HTML(tr.html()))
assert sandbox.payment(payment_id)["status"] == "canceled" and sandbox.refunds(payment_id) == []
assert api.booking(booking_id, erin)["status"] == "EXPIRED"
print("provider status:", sandbox.payment(payment_id)["status"], "| refunds:", sandbox.refunds(payment_id))
""")

md(r"""
### 3.5 A lost create-payment response

The provider creates the payment but the connection drops before its answer reaches us
(`drop_response_after`). The customer gets 503; the attempt stays `PAYMENT_PENDING` with no payment
id. Reconciliation's first check (at the end of the 5-second bucket its due time falls in, still
inside the provider's key window) repeats the create
call with the same key `hf-pay-<booking>` and body: the provider returns the payment it already made,
not a second one.
""")

code(r"""
tr = Trace("lost create-payment response")
ev = tr.event(capacity=2)
frank = customer()
booking_id = tr.book(ev, frank).json()["booking_id"]
sandbox.add_fault("drop_response_after", route="POST /v3/payments", times=1)
tr.provider("fault armed: the next create is performed, its response dropped")
assert tr.pay(booking_id, frank).status_code == 503
found = api.wait_for(booking_id, frank, lambda b: (b.get("payment") or {}).get("payment_id"), what="payment id")
sandbox.pay(found["payment"]["payment_id"]); tr.provider("customer pays the one payment")
api.wait_status(booking_id, frank, "CONFIRMED")
display(HTML(tr.html()))
assert "payment_found_by_same_key" in actions(api.booking(booking_id, frank))
assert len(sandbox.find_payments(booking_id=booking_id)) == 1
print("payments at the provider for this booking:", len(sandbox.find_payments(booking_id=booking_id)))
""")

md(r"""
### 3.6 A notification lost forever: the reconciliation schedule and its limit

The sandbox drops every notification for the payment (`drop_forever`). Reconciliation, started when
the attempt was stored, checks on its schedule (here 1, 1, 2, 2... s; deployed 30 s, 1, 2, 5, 15,
30 min, then hourly) and learns the outcome by `GET`, through the same `judge_payment` as the webhook
path. The second booking's payment is never completed: at the limit (here 12 s after the attempt;
deployed 24 h, the provider's notification window) reconciliation gives up, the booking ends
`PAYMENT_FAILED` and its place is released. A success reported after that would be a late payment
(3.3/3.4).
""")

code(r"""
tr = Trace("notification lost forever; the limit")
ev = tr.event(capacity=3)            # default hold (600 s) outlives the 12 s limit
gina, hank = customer(), customer()
paid_id = tr.book(ev, gina).json()["booking_id"]
pending_id = tr.book(ev, hank).json()["booking_id"]
payment_id = tr.pay(paid_id, gina).json()["payment_id"]
sandbox.add_fault("drop_forever", match={"object_id": payment_id})
time.sleep(1.5)
sandbox.pay(payment_id); tr.provider("paid; every notification for it will be dropped")
tr.pay(pending_id, hank)             # hank never pays
done = api.wait_status(paid_id, gina, "CONFIRMED", timeout=LIMIT + 5)
failed = api.wait_status(pending_id, hank, "PAYMENT_FAILED", timeout=LIMIT + 15)
sandbox.clear_faults()
display(HTML(tr.html()))
assert done["journal"][-1]["actor"] == "reconciler"
assert all(d["outcome"] != "delivered" for d in sandbox.deliveries(object_id=payment_id))
assert actions(failed)[-1] == "reconciliation_limit_reached" and api.counts(ev["event_id"])["held"] == 0
checks = [e["at"] for e in record.full(pending_id)["journal"] if e["action"] == "reconciliation_check"]
gaps = [round((parse(b) - parse(a)).total_seconds(), 1) for a, b in zip(checks, checks[1:])]
print("hank: checks at", len(checks), "moments, gaps (s):", gaps, "| limit reached after",
      round((parse(failed["journal"][-1]["at"]) - parse(failed["journal"][1]["at"])).total_seconds(), 1), "s")
""")

md(r"""
### 3.7 A crash between storing the payment and sending the confirmation

The handlers run in this kernel, so `HOLDFAST_CRASH_POINTS` in `os.environ` arms the crash points
of `holdfast/faults.py`. First the consumer dies right after it stored `CONFIRMED`
(`consumer.after_applying`), and the outbox relay dies before publishing (`outbox.before_publish`).
The queue redelivers the notification (now a no-op: `already_confirmed`) and the stream retries the
outbox record: the customer gets exactly one confirmation, because the confirmation is an outbox
item written in the same transaction as the status change.

Then a crash between storing the attempt and calling the provider (`payment.after_storing_attempt`):
the customer gets 500, no payment exists, and the sweeper restarts reconciliation, which creates the
payment with the stored key.
""")

code(r"""
tr = Trace("crash after storing the outcome")
ev = tr.event(capacity=2)
ivan = customer()
booking_id = tr.book(ev, ivan).json()["booking_id"]
payment_id = tr.pay(booking_id, ivan).json()["payment_id"]
faults.reset_crash_counts()
os.environ["HOLDFAST_CRASH_POINTS"] = "consumer.after_applying:1,outbox.before_publish:1"
quiet_from = logger.log_level
logger.setLevel("CRITICAL")  # the injected crashes are logged at ERROR with a traceback; not shown here
tr.step("notebook", "crash points armed: consumer.after_applying:1, outbox.before_publish:1")
try:
    sandbox.pay(payment_id); tr.provider("paid")
    api.wait_status(booking_id, ivan, "CONFIRMED")
    store = wiring.store()
    wait_until(lambda: any(n["type"] == "booking.confirmed" for n in store.list_notifications(ivan)), timeout=20,
               what="the confirmation")
    time.sleep(1.0)
finally:
    os.environ.pop("HOLDFAST_CRASH_POINTS", None)
    logger.setLevel(quiet_from)
display(HTML(tr.html()))
print("crash points fired:", dict(faults._fired))
assert faults._fired.get("consumer.after_applying") == 1 and faults._fired.get("outbox.before_publish") == 1
notes = store.list_notifications(ivan)
table(["customer notification", "status", "at"], [[n["type"], n["status"], n["at"]] for n in notes],
      caption="What the customer was told (outbox relay, once per booking version)")
assert [n["type"] for n in notes].count("booking.confirmed") == 1
assert actions(api.booking(booking_id, ivan)).count("payment_succeeded") == 1
""")

code(r"""
tr = Trace("crash before calling the provider")
ev = tr.event(capacity=2)
judy = customer()
booking_id = tr.book(ev, judy).json()["booking_id"]
faults.reset_crash_counts()
os.environ["HOLDFAST_CRASH_POINTS"] = "payment.after_storing_attempt:1"
quiet_from = logger.log_level
logger.setLevel("CRITICAL")
try:
    crashed = tr.pay(booking_id, judy)
finally:
    os.environ.pop("HOLDFAST_CRASH_POINTS", None)
    logger.setLevel(quiet_from)
assert crashed.status_code == 500 and sandbox.find_payments(booking_id=booking_id) == []
time.sleep(2)
tr.step("scheduler", "SweepDueFunction runs (EventBridge rate(1 minute) in AWS)")
stack.invoke("SweepDueFunction", {"detail-type": "Scheduled Event", "source": "aws.events"})
found = api.wait_for(booking_id, judy, lambda b: (b.get("payment") or {}).get("payment_id"), what="the payment")
sandbox.pay(found["payment"]["payment_id"]); tr.provider("customer pays")
api.wait_status(booking_id, judy, "CONFIRMED")
display(HTML(tr.html()))
assert len(sandbox.find_payments(booking_id=booking_id)) == 1
""")

md(r"""
### 3.8 A refund retried after a timeout

A confirmed customer cancels. The refund is recorded with its key (`rf-<payment>-cancel`) before the
call; the provider performs it but the answer is lost, and the `refund.succeeded` notification is
dropped too. The booking stays `REFUND_PENDING` (the places are already back on sale); reconciliation
repeats the refund with the same key, the provider returns the one refund, and the booking ends
`REFUNDED`. The compensation is a new journal entry; the history before it is untouched.
""")

code(r"""
tr = Trace("refund retried after a timeout")
ev = tr.event(capacity=2)
kate = customer()
booking_id = tr.book(ev, kate).json()["booking_id"]
payment_id = tr.pay(booking_id, kate).json()["payment_id"]
sandbox.pay(payment_id); tr.provider("paid")
api.wait_status(booking_id, kate, "CONFIRMED")
sandbox.add_fault("drop_response_after", route="POST /v3/refunds", times=1)
sandbox.add_fault("drop_forever", match={"event": "refund.succeeded"})
tr.provider("faults armed: the refund's answer and its notification will be lost")
cancelled = api.cancel(booking_id, kate)
tr.step(kate, f"POST /bookings/…/cancel → {cancelled.status_code} {cancelled.json()['status']}")
assert cancelled.json()["status"] == "REFUND_PENDING"
done = api.wait_status(booking_id, kate, "REFUNDED", timeout=LIMIT + 5)
sandbox.clear_faults()
display(HTML(tr.html()))
assert done["journal"][-1]["actor"] == "reconciler" and len(sandbox.refunds(payment_id)) == 1
print("refunds at the provider:", [(r["id"][:8], r["status"], r["amount"]["value"]) for r in sandbox.refunds(payment_id)])
""")

md(r"""
### 3.9 An appointment: the time resold, another time chosen (seed 003)

The story of requirement 003: the hold of a time ends at "12:10", another customer takes the same
time and confirms it at "12:11", and at "12:12" the first customer's payment (two-stage, an
authorisation) is reported. The first booking is never restored over the second: the money is
kept (nothing captured) and a conflict case offers the nearest free times of the service, with a
deadline and an operator. The customer chooses another time: its places are pinned first, then the
same authorisation is captured once, and the booking is confirmed at the new time. Here the hold
lasts 3 s, so "12:10" is 3 s after the hold.
""")

code(r"""
from datetime import datetime, timedelta, timezone

tr = Trace("appointment: the time resold, another time chosen")
hire = tr.service(name="Hall hire", mode="private", capacity=None, hold_ttl_seconds=3)
DAY = (datetime.now(timezone.utc) + timedelta(days=2)).date().isoformat()
ten = f"{DAY}T10:00:00+03:00"
olga, pavel = customer(), customer()
booking_id = tr.book_slot(hire, olga, ten).json()["booking_id"]
payment_id = tr.pay(booking_id, olga).json()["payment_id"]
api.wait_status(booking_id, olga, "EXPIRED", timeout=15)                                   # "12:10"
rival_id = tr.book_slot(hire, pavel, ten).json()["booking_id"]                              # "12:11"
rival_payment = tr.pay(rival_id, pavel).json()["payment_id"]
sandbox.pay(rival_payment); tr.provider("customer (the rival) authorises on the payment page")
api.wait_status(rival_id, pavel, "CONFIRMED")
sandbox.pay(payment_id); tr.provider("customer (the first) authorises after the time was resold")   # "12:12"
case = api.wait_status(booking_id, olga, "MANUAL_REVIEW")
offered = case["resolution"]["alternatives"]
def local(moment: str) -> str:   # the hall's wall clock (Europe/Moscow, UTC+3): what the customer reads
    return parse(moment).astimezone(timezone(timedelta(hours=3))).strftime("%H:%M")


tr.step("notebook", "offered (local): " + ", ".join(local(a["starts_at"]) for a in offered))
chosen = offered[0]
moved = tr.choose(booking_id, olga, {"choice": "alternative", "starts_at": chosen["starts_at"],
                                     "resource_id": chosen["resource_id"]})
done = api.wait_status(booking_id, olga, "CONFIRMED")
time.sleep(0.5)
display(HTML(tr.html()))
SLOT_STORY = {"first": booking_id, "rival": rival_id, "payment": payment_id, "chosen": chosen["starts_at"]}
assert moved.status_code == 200 and done["places"]["starts_at"] == chosen["starts_at"] != ten
assert api.booking(rival_id, pavel)["places"]["starts_at"] == parse(ten).astimezone(timezone.utc).isoformat(
    timespec="milliseconds").replace("+00:00", "Z")
print("offered (local):", [local(a["starts_at"]) for a in offered], "| chosen:", local(chosen["starts_at"]),
      "| the first booking's journal:", actions(done)[-3:])
""")

md(r"""
### 3.10 Parking: reserved, entered with the token, overstayed, paid at the exit (issue 14)

A one-space lot (100.00 RUB an hour, 10 grace minutes, `docs/parking.md`). The customer reserves
the current half hour and the next (100.00: one started hour), pays (`CONFIRMED`, the booking's view now
carries `entry_token`), and the
car enters through the gate with its token over HTTP (`CHECKED_IN`; a ticket is opened on the
space). The car then **stays past `to`**: the exits are made by the exit route's own code
(`apply_gate_pass` of `products/parking/wiring.py`, the function the route and the gate sync
call) at the gate's clock moved 140 minutes past the entry (at least 80 past `to`: `traces.overstay_exit`, the same
started hours at both exits whatever the wall clock), so the overstay takes no hour (the only step not made over HTTP; `t`
stays real time, the gate's clock is written on the step). The first exit owes the tariff of the
stay less what was prepaid (`exit_granted: false`, `amount_due`, `confirmation_url`, a provider
payment for exactly that amount); the customer pays on the provider's page; the next exit reads the
payment, is granted, and in one transaction closes the ticket, releases the space and moves the
booking to `COMPLETED` (its outbox event `vehicle.exited`). A repeat of that exit (the same pass
id) gets the same answer and releases nothing; a new pass on the closed ticket is refused
(`ticket_closed`): a closed ticket never opens the exit again, for anyone. The lot's counts are read after each step for P2 in section 4; a rival's
reservation of the same window is refused while the car is inside (P1).
""")

code(r"""
import math
from decimal import Decimal
from holdfast import wiring as _wiring

tr = Trace("parking: an overstay paid at the exit")
lot = api.request("POST", "/lots", organizer=True, json={
    "name": "Notebook lot", "spaces": [{"space_id": "R1", "type": "REGULAR"}], "hold_ttl_seconds": 30,
    "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}, "grace_minutes": 10}}).json()
gate = api.request("POST", f"/lots/{lot['lot_id']}/gates", organizer=True, json={"name": "North"}).json()
LOT_COUNTS = []
def lot_counts(moment: str) -> None:   # the lot's REGULAR counts now, kept for P2
    counts = api.request("GET", f"/lots/{lot['lot_id']}").json()["counts"]["REGULAR"]
    LOT_COUNTS.append((moment, counts))


half = datetime.now(timezone.utc).replace(second=0, microsecond=0)
half = half.replace(minute=half.minute - half.minute % 30)
window = {"from": half.isoformat().replace("+00:00", "Z"),
          "to": (half + timedelta(minutes=60)).isoformat().replace("+00:00", "Z")}   # two granules: a pass near the half hour stays inside
car, rival_car = customer(), customer()
asked = {"vehicle_type": "REGULAR", "plate": "A 123 BC 77", "handicap_permit": False, **window}
reservation = tr.reserve(lot, car, asked).json()
parking_id = reservation["booking_id"]
prepaid_payment = tr.pay(parking_id, car).json()["payment_id"]
sandbox.pay(prepaid_payment); tr.provider("customer pays the reservation on the payment page")
confirmed = api.wait_status(parking_id, car, "CONFIRMED")
lot_counts("reserved, paid")
entered = tr.gate_pass(lot, gate, "entry", {"event_id": "in-1", "token": confirmed["entry_token"]})
lot_counts("inside")
refused = tr.reserve(lot, rival_car, {**asked, "plate": "B 456 CD 77"}, key="rival", note="a second car: ")
out_at = traces.overstay_exit(parse(_wiring.store().get_ticket(entered["ticket_id"])["entered_at"]), parse(window["to"]))
owed = tr.gate_pass(lot, gate, "exit", {"event_id": "out-1", "ticket_id": entered["ticket_id"]}, at=out_at)
lot_counts("at the exit, owing")
[exit_payment] = sandbox.payments(ticket_id=entered["ticket_id"])
tr.payments.append(exit_payment["id"])
sandbox.pay(exit_payment["id"]); tr.provider("customer pays the amount due on the payment page")
# its notification reaches the payment-events function, which records it on the ticket: wait for that
recorded_by = time.monotonic() + 20
while not any(p["state"] == "paid" for p in _wiring.store().exit_payments(entered["ticket_id"])):
    assert time.monotonic() < recorded_by, "the exit payment was never recorded on its ticket"
    time.sleep(0.1)
granted = tr.gate_pass(lot, gate, "exit", {"event_id": "out-2", "ticket_id": entered["ticket_id"]},
                       at=out_at + timedelta(minutes=2))
lot_counts("after the exit")
repeat = tr.gate_pass(lot, gate, "exit", {"event_id": "out-2", "ticket_id": entered["ticket_id"]},
                      at=out_at + timedelta(minutes=2))
again = tr.gate_pass(lot, gate, "exit", {"event_id": "out-3", "ticket_id": entered["ticket_id"]},
                     at=out_at + timedelta(minutes=3))
lot_counts("after a repeat and a new pass on the closed ticket")
display(HTML(tr.html()))
table(["moment", "total", "available", "held", "reserved", "occupied"],
      [[m, c["total"], c["available"], c["held"], c["reserved"], c["occupied"]] for m, c in LOT_COUNTS],
      caption="The lot's REGULAR spaces (GET /lots/{id}) after each step")
PARKING_STORY = {"lot": lot, "booking": parking_id, "ticket": entered["ticket_id"], "prepaid": prepaid_payment,
                 "exit_payment": exit_payment["id"], "owed": owed, "exit_at": out_at + timedelta(minutes=2)}
assert entered["gate_open"] and refused.status_code == 409 and refused.json()["error"]["code"] == "no_space_available"
assert owed["exit_granted"] is False and owed["amount_due"] and owed["confirmation_url"]
assert granted["exit_granted"] is True and repeat == granted and again["exit_granted"] is False and again["reason"] == "ticket_closed"
print("journal:", actions(record.full(parking_id)), "| owed at the first exit:", owed["amount_due"])
""")

# ================================================================================================
md(r"""
## 4. Invariants, each checked on the traces above

The checks read the final state through the API (`GET /admin/bookings/{id}`, the organizer's view
with every journal entry, since the customer's `GET /bookings/{id}` leaves out operators' notes and
internal checks; `GET /events/{id}`),
the provider's side through the sandbox, and, where the API does not show it, the table itself.
They cover every booking created in section 3 (and section 6, once it has run: the last cell
re-runs them all).
""")

code(r"""
store = wiring.store()
FINAL = {}
def refresh() -> None:
    for booking_id, info in BOOKINGS.items():
        answer = api.request("GET", f"/admin/bookings/{booking_id}", organizer=True)
        assert answer.status_code == 200, answer.text
        FINAL[booking_id] = answer.json()
refresh()
print(f"{len(BOOKINGS)} bookings over {len(EVENTS)} events and {len(TRACES)} traces;",
      dict(Counter(b["status"] for b in FINAL.values())))
""")

md(r"""
**Which statuses count toward capacity.** `HOLDING = {HELD, PAYMENT_PENDING}` and
`SOLD = {CONFIRMED}` take places; together they are `OCCUPYING`. Every other status is `RELEASED`:
`EXPIRED, CANCELLED, PAYMENT_FAILED, REFUND_PENDING, REFUNDED, MANUAL_REVIEW`. A hold keeps counting
after its deadline until the timer writes `EXPIRED`: a deadline alone releases nothing.

**I1 No oversell.** For every event, the places of its `OCCUPYING` bookings add up to at most its
capacity.

**I2 The counters are the bookings.** For every event, `available + held + sold == capacity`, no
counter is negative, `held` = the places of its `HOLDING` bookings and `sold` = the places of its
`CONFIRMED` bookings.
""")

code(r"""
def check_capacity() -> list[str]:
    lines = []
    for event_id, event in EVENTS.items():
        mine = [FINAL[b] for b, info in BOOKINGS.items() if info["event_id"] == event_id]
        held = sum(b["places"]["quantity"] for b in mine if b["status"] in HOLDING)
        sold = sum(b["places"]["quantity"] for b in mine if b["status"] in SOLD)
        counts = api.counts(event_id)
        assert held + sold <= event["capacity"], ("I1 oversold", event_id, held, sold)
        assert min(counts.values()) >= 0 and sum(counts.values()) == event["capacity"], ("I2", event_id, counts)
        assert (counts["held"], counts["sold"]) == (held, sold), ("I2 counters differ from bookings", event_id, counts)
        lines.append(f"capacity {event['capacity']}: {counts} = bookings held {held}, sold {sold}")
    return lines
for line in check_capacity():
    print("OK", line)
""", shown=True)

md(r"""
**Released** means: the transaction that moved the booking into a `RELEASED` status also moved its
places back to `available` (`RELEASE` or `UNSELL`). Conversely a released booking gives nothing
back twice, and takes places again only by a conditional move (`RETAKE`, or `HOLD` for a two-stage
authorisation) that fails when they are gone. On the journals: each entry into a released status
comes from an occupying one or another released one; each way back to `OCCUPYING` starts from a
released status only through a late payment or an operator (the actions in 2.3); and the counters
above already match the bookings, so no release was lost or doubled.
""")

code(r"""
BACK = {"late_payment_places_retaken", "late_authorisation_places_retaken", "review_confirmed", "review_places_pinned",
        "alternative_chosen"}
moves = Counter()
for booking_id, booking in FINAL.items():
    for entry in booking["journal"]:
        before, after = entry["from_status"], entry["to_status"]
        if before is None or before == after:
            continue
        if before in RELEASED and after in OCCUPYING:
            assert entry["action"] in BACK, ("places taken back outside RETAKE/HOLD", booking_id, entry)
            moves["released → occupying (conditional retake)"] += 1
        elif before in OCCUPYING and after in RELEASED:
            moves["occupying → released (places returned)"] += 1
print("OK", dict(moves))
""", shown=True)

md(r"""
**I4 Statuses move only along `TRANSITIONS`, and I5 every change is journalled.** In every journal
the first entry goes from nothing to `HELD`, each entry starts where the previous one ended, each
status change is in `TRANSITIONS`, the last entry's status is the booking's status, and the stored
`version` equals the number of entries (read from the table, `BOOKING#<id>`).
""")

code(r"""
for booking_id, booking in FINAL.items():
    journal = booking["journal"]
    assert journal[0]["from_status"] is None and journal[0]["to_status"] == "HELD", booking_id
    for previous, entry in zip(journal, journal[1:]):
        assert entry["from_status"] == previous["to_status"], (booking_id, previous, entry)
        if entry["from_status"] != entry["to_status"]:
            assert BookingStatus(entry["to_status"]) in TRANSITIONS[BookingStatus(entry["from_status"])], (booking_id, entry)
    assert journal[-1]["to_status"] == booking["status"], booking_id
    assert store.get_booking(booking_id).version == len(journal), booking_id
seen = Counter((e["from_status"], e["to_status"]) for b in FINAL.values() for e in b["journal"]
               if e["from_status"] and e["from_status"] != e["to_status"])
print(f"OK: {sum(len(b['journal']) for b in FINAL.values())} journal entries; transitions exercised:",
      f"{len(seen)} of {len(booking_edges)}")
""", shown=True)

md(r"""
**I6 The money rule.** "Money taken" means a provider payment in `succeeded`; an authorisation
(`waiting_for_capture`) takes no money. For each payment p of a booking b (`metadata.booking_id`):
p is refunded at most once; once settled exactly one of these holds: b is `CONFIRMED` on p and p has
no refund; or p is refunded once and b is `REFUNDED`; or p has no refund and b is `MANUAL_REVIEW`
(an operator owns it). A payment that is not `succeeded` has no refund, and no authorisation is left
in `waiting_for_capture`. A second payment for one booking must not be silently kept (section 6).
""")

code(r"""
def check_money() -> Counter:
    outcome = Counter()
    for booking_id, booking in FINAL.items():
        for p in sandbox.find_payments(booking_id=booking_id):
            refunds = [r for r in sandbox.refunds(p["id"]) if r["status"] == "succeeded"]
            assert len(refunds) <= 1, ("refunded twice", p["id"])
            assert p["status"] != "waiting_for_capture", ("authorisation left open", p["id"])
            if p["status"] != "succeeded":
                assert not refunds
                outcome[f"{p['status']}: no money taken"] += 1
                continue
            mine = (booking.get("payment") or {}).get("payment_id") == p["id"]
            if booking["status"] == "CONFIRMED" and mine and not refunds:
                outcome["succeeded → CONFIRMED, no refund"] += 1
            elif booking["status"] == "REFUNDED" and len(refunds) == 1:
                outcome["succeeded → REFUNDED once"] += 1
            elif booking["status"] == "MANUAL_REVIEW" and not refunds:
                outcome["succeeded → MANUAL_REVIEW (operator)"] += 1
            else:
                raise AssertionError(("money rule broken", booking_id, booking["status"], p["id"], len(refunds)))
    return outcome
print("OK", dict(check_money()))
""", shown=True)

md(r"""
**I7 Idempotency** (shown in 3.1): the same customer, key and body return the same booking; the same
key with another body is refused; every payment request for a booking returns its one payment.
**I8 One winner when expiry races confirmation**: no booking was confirmed twice, and no paid booking
was both confirmed and expired by the same payment without the late path in between.
""")

code(r"""
CONFIRMING = {"payment_succeeded", "payment_captured", "late_payment_places_retaken", "review_confirmed"}
for booking_id, booking in FINAL.items():
    acts = actions(booking)
    assert sum(a in CONFIRMING for a in acts) <= 1, ("confirmed twice", booking_id, acts)
    succeeded = [p for p in sandbox.find_payments(booking_id=booking_id) if p["status"] == "succeeded"]
    assert len(succeeded) <= 1 or booking["status"] == "MANUAL_REVIEW", booking_id
happy = TRACES["happy path"]
assert len(happy.bookings) == 1, "three POSTs with one key made more than one booking"
print("OK: every booking confirmed at most once; at most one payment taken per booking (or an operator owns it)")
""", shown=True)

md(r"""
The payment lifecycle declared in 2.2 against what the provider did: each payment's notifications,
in order of the status they report, follow `PROVIDER_PAYMENT`.
""")

code(r"""
observed = Counter()
for booking_id in BOOKINGS:
    for p in sandbox.find_payments(booking_id=booking_id):
        path = ["pending"]
        for d in sorted(sandbox.deliveries(object_id=p["id"]), key=lambda d: d["at"]):
            status = d["event"].split(".", 1)[1]
            if d["event"].startswith("payment.") and not d["forged"] and status != path[-1]:
                path.append(status)
        if p["status"] != path[-1]:
            path.append(p["status"])
        for a, b in zip(path, path[1:]):
            assert b in PROVIDER_PAYMENT[a], (p["id"], path)
            observed[(a, b)] += 1
print("OK, provider transitions seen:", dict(observed))
""", shown=True)

md(r"""
**A1 One time of a resource, one booking** (the appointment of 3.9): the bookings of an
appointment service that hold or own their time never overlap on one resource. **A2 The conflict
case keeps the customer's one payment**: the first booking was not restored over the rival's (the
rival's journal has no entry after its confirmation), it moved to an offered time, the provider
holds exactly one payment for it, captured once and never refunded, and no second payment was made.
""")

code(r"""
def check_slots() -> list[str]:
    lines = []
    slot_bookings = {b: FINAL[b] for b, info in BOOKINGS.items() if info.get("service")}
    by_resource = {}
    for booking_id, booking in slot_bookings.items():
        if booking["status"] in OCCUPYING:
            places = booking["places"]
            by_resource.setdefault(places["resource_id"], []).append((places["starts_at"], places["ends_at"], booking_id))
    for resource, spans in by_resource.items():
        spans.sort()
        for (_, end, first), (start, _, second) in zip(spans, spans[1:]):
            assert end <= start, ("A1 one time booked twice", resource, first, second)
        lines.append(f"resource {resource[:8]}: {len(spans)} bookings, none overlapping")
    return lines


for line in check_slots():
    print("OK A1", line)
first, rival = FINAL[SLOT_STORY["first"]], FINAL[SLOT_STORY["rival"]]
assert actions(rival)[-1] == "payment_captured" and rival["status"] == "CONFIRMED", "A2 the rival was touched"
assert first["status"] == "CONFIRMED" and first["places"]["starts_at"] == SLOT_STORY["chosen"]
assert first["resolution"]["decision"]["choice"] == "alternative"
assert SLOT_STORY["chosen"] in [a["starts_at"] for a in first["resolution"]["alternatives"]]
paid = sandbox.find_payments(booking_id=SLOT_STORY["first"])
assert [p["id"] for p in paid] == [SLOT_STORY["payment"]] and paid[0]["status"] == "succeeded"
assert sandbox.refunds(SLOT_STORY["payment"]) == []
assert actions(first).count("payment_captured") == 1
print("OK A2: moved to", SLOT_STORY["chosen"], "with its one payment, captured once, nothing refunded")
""", shown=True)

md(r"""
**P1 No space twice, P2 occupancy never negative** (the parking of 3.10, `docs/invariants.md`): no
half-hour granule of a space belongs to two unreleased reservations or open tickets at once; the
lot's counts were never negative and always added up to its spaces, after every step of the trace;
a space holds at most one open ticket; every granule item's counters are 0 or 1. The reservation's
journal follows the parking kind's declared lifecycle (`domain/lifecycle.py: allows`).
**P3 The money at the exit**: the exit payment is the tariff of the stay (every started minute from
entry to exit, less the grace minutes; every started hour at the hourly rate) less what was
prepaid, made once, paid once and never refunded; the reservation's own payment was taken once.
""")

code(r"""
from holdfast.domain import lifecycle as kind_states

def granules_of(start: str, end: str) -> list[str]:
    at, until, found = parse(start), parse(end), []
    while at < until:
        found.append(at.strftime("%Y-%m-%dT%H:%M"))
        at += timedelta(minutes=30)
    return found


def check_parking() -> list[str]:
    lines = []
    for lot_id in {info["lot_id"] for info in record.parking.values()}:
        owners = Counter()
        for booking_id, info in record.parking.items():
            booking = record.full(booking_id)
            if info["lot_id"] == lot_id and (booking["status"] in OCCUPYING or kind_states.occupies(booking["status"])):
                places = booking["places"]
                owners.update((places["space_id"], g) for g in granules_of(places["from"], places["to"]))
            journal = booking["journal"]
            for entry in journal[1:]:
                if entry["from_status"] != entry["to_status"] and kind_states.declared(entry["to_status"]):
                    assert kind_states.allows("parking", entry["from_status"], entry["to_status"], entry["actor"]), entry
        tickets = [store.get_ticket(item["ticket_id"]) for item in store.open_tickets(lot_id)]
        for ticket in tickets:
            owners.update((ticket["space_id"], g) for g in ticket.get("granules") or ())
        assert all(n == 1 for n in owners.values()), ("P1 a space granule held twice", owners)
        assert len({t["space_id"] for t in tickets}) == len(tickets), ("P2 a space holds two open tickets", tickets)
        spans = [record.full(b)["places"] for b, info in record.parking.items() if info["lot_id"] == lot_id]
        stored = store.read_lot_granules(lot_id, min(s["from"] for s in spans)[:16], max(s["to"] for s in spans)[:16])
        for key, item in stored.items():
            assert all(0 <= int(item.get(name, 0)) <= 1 for name in ("taken", "held", "sold")), ("P2 counters", key, item)
        lines.append(f"lot {lot_id[:8]}: {len(owners)} granules held now, each once; {len(tickets)} open tickets; "
                     f"{len(stored)} granule items, counters 0 or 1")
    for moment, counts in LOT_COUNTS:
        assert min(counts.values()) >= 0, ("P2 negative count", moment, counts)
        assert counts["available"] + counts["held"] + counts["reserved"] + counts["occupied"] == counts["total"], (moment, counts)
    lines.append(f"lot counts after {len(LOT_COUNTS)} steps: never negative, always adding up to the spaces")
    return lines


for line in check_parking():
    print("OK P1/P2", line)

story = PARKING_STORY
settings = story["lot"]["tariff"]
ticket = store.get_ticket(story["ticket"])
stay = math.ceil((story["exit_at"] - parse(ticket["entered_at"])).total_seconds() / 60) - settings["grace_minutes"]
tariff = Decimal(settings["hourly"]["value"]) * math.ceil(max(stay, 0) / 60)
prepaid = [p for p in sandbox.find_payments(booking_id=story["booking"])]
exit_paid = sandbox.payments(ticket_id=story["ticket"])
assert [p["id"] for p in prepaid] == [story["prepaid"]] and prepaid[0]["status"] == "succeeded"
assert [p["id"] for p in exit_paid] == [story["exit_payment"]] and exit_paid[0]["status"] == "succeeded"
due = tariff - Decimal(prepaid[0]["amount"]["value"])
assert Decimal(exit_paid[0]["amount"]["value"]) == due == Decimal(story["owed"]["amount_due"]["value"]) > 0, (tariff, due)
assert Decimal(ticket["charge"]) == tariff and ticket["status"] == "CLOSED"
assert sandbox.refunds(story["prepaid"]) == [] and sandbox.refunds(story["exit_payment"]) == []
print(f"OK P3: a stay of {stay} billable minutes costs {tariff}; prepaid {prepaid[0]['amount']['value']},",
      f"paid at the exit {exit_paid[0]['amount']['value']} once, nothing refunded")
""", shown=True)

# ================================================================================================
md(r"""
## 5. Late payments: the options compared

A late payment is one that the provider completes after the booking's places were released. Four
ways to handle it, on the criteria that matter to the club, its customers and its operators:

| option | money moved | customer experience | operator load | overselling risk | provider fees |
|---|---|---|---|---|---|
| **A. Always refund automatically** | charge, then refund: two movements | "paid, then refunded" even when a seat was free: a lost sale and a bad surprise | none | none | the acquiring fee of the charge is usually not returned on a refund (the sandbox models it: `income_amount` < `amount`, 3.1/3.4) |
| **B. Take the places again if free, otherwise refund** | one charge; a refund only when resold | the seat is kept whenever possible; otherwise the money returns without asking | none | none, if the retake is a conditional move (it is: `RETAKE` fails when the places are gone) | fee lost only in the resold case |
| **C. Manual review of every late payment** | nothing until an operator acts | waits for a person; an explicit status and next step | one case per late payment: at 300 attempts/s, too many | none if the operator's confirm is also conditional | as A or B, later |
| **D. Two-stage capture (authorise, pin places, capture)** | an authorisation; money moves only once the places are pinned; a late authorisation is cancelled, nothing to refund | the customer sees a hold on the card that disappears | none | none: capture happens only after places are pinned | no charge, so usually no fee on a cancelled authorisation; but authorisations expire (7 days) and not every method supports them |

**The choice** (see `docs/payments-that-go-wrong.md`): **B for one-stage events, D where the
organiser enables two-stage payments, and C only for the narrow case where the customer was not
late**: paid before `hold_expires_at` (provider's `captured_at`) but the notification arrived after
the places were resold (`paid_in_time_places_resold`). Why:

* B keeps every sale that can be kept, never oversells (the retake is the same conditional move as a
  hold), and needs no people; the money goes back automatically only to a customer who really was late.
* D removes the refund (and its fee) from the late path altogether; it is per event because it
  changes what the customer sees at the bank and the organiser's settlement.
* C for "paid in time": an automatic refund would tell a customer who did nothing wrong that they
  were too late. An operator can offer other seats or the money back (`refund`, `confirm` if places
  can be retaken, `close`), and the customer sees the reason and next step on the booking. It is rare
  (the notification had to be late *and* the place resold), so the operator load stays small.
* A was rejected for the lost sales and fees; C-for-everything for the operator load.

The traces show B (3.3 retake, 3.4 refund) and D (3.4 two-stage). The review path is exercised by
`tests/integration/test_payments_that_go_wrong.py::test_paid_in_time_but_reported_after_resale_goes_to_an_operator`.
""")

# ================================================================================================
md(r"""
## 6. What we assume about the provider, and what happens when it is wrong

| assumption (YooKassa) | where the design relies on it | parameter |
|---|---|---|
| an `Idempotence-Key` is kept **24 h** | a lost create response is settled by repeating the create with `hf-pay-<booking>`; a refund by repeating `rf-<payment>-<reason>` | `ProviderKeyRetentionSeconds` (86400) |
| notifications are retried for **24 h** | reconciliation's limit is the same 24 h: past it we stop waiting | `ReconcileLimitSeconds` (86400) |
| the payment is readable by `GET` and listable by `metadata` | reconciliation learns outcomes without notifications | - |

**6.1 Notifications stop for good.** Shown in 3.6: with every notification dropped, reconciliation
still finds the outcome by `GET`; only latency suffers.

**6.2 The provider forgets a key sooner than we assume.** Below, the create response is lost; then
the sandbox's clock is moved 25 h ahead (its key store forgets `hf-pay-<booking>`; the pending payment
also expires there). Our own clock says we are still inside the key window, so reconciliation
repeats the create with the same key, and the provider, having forgotten it, makes a **second**
payment. The table shows what the system does with that.
""")

code(r"""
tr = Trace("provider forgot the idempotence key")
ev = tr.event(capacity=2)
leo = customer()
booking_id = tr.book(ev, leo).json()["booking_id"]
sandbox.add_fault("drop_response_after", route="POST /v3/payments", times=1)
# The first payment's `canceled` notification is held back, to be delivered after the repeat.
sandbox.add_fault("hold", times=10, match={"event": "payment.canceled"})
assert tr.pay(booking_id, leo).status_code == 503
sandbox.advance(25 * 3600)
tr.provider("sandbox clock +25 h: the key store forgets hf-pay-<booking>; the first payment expires (notice held)")
found = api.wait_for(booking_id, leo, lambda b: (b.get("payment") or {}).get("payment_id"), timeout=10,
                     what="a payment id")
second = found["payment"]["payment_id"]
sandbox.pay(second); tr.provider(f"customer pays the payment it was shown ({short(second)})")
api.wait_status(booking_id, leo, "CONFIRMED")
released = sandbox.release(); tr.provider(f"{released} held payment.canceled notification(s) released, the first payment's among them")
time.sleep(2)
display(HTML(tr.html()))
final = api.booking(booking_id, leo)
at_provider = sandbox.find_payments(booking_id=booking_id)
table(["payment", "status", "created_at (sandbox clock)", "the booking's payment?"],
      [[p["id"][:8], p["status"], p["created_at"], p["id"] == second] for p in at_provider],
      caption="Payments at the provider for this one booking")
print("booking:", final["status"], "| last journal entry:", final["journal"][-1]["action"], final["journal"][-1]["decision"],
      "| payments at the provider:", len(at_provider))
reviews = api.request("GET", "/admin/reviews", organizer=True)
print("listed in GET /admin/reviews (the operators' list):", booking_id in reviews.text)
assert len(at_provider) == 2, "the provider was expected to make a second payment once it forgot the key"
assert sum(p["status"] == "succeeded" for p in at_provider) == 1
""")

md(r"""
Reading the result: with a provider that keeps its promise (24 h), the repeat in 3.5 returned the
one payment. With a provider that forgets early, a repeat makes a second payment, and the design's
answer is that nothing relies on the key alone: every payment carries `metadata.booking_id`, the
consumer and the reconciler judge every payment they see against the booking's recorded payment id,
and a payment the booking does not know is a `second_payment_for_booking` case for an operator
(`judge_payment` in `holdfast/domain/booking.py`) rather than a second confirmation. The checks of
section 4, re-run below over every booking including this one, assert that no money was taken
twice without an operator owning it.

Note what the run shows: the booking was already `CONFIRMED` on the second payment, so the
`second_payment_for_booking` finding is a journal entry (`manual_review_needed`) and the booking
stays `CONFIRMED`; the cell prints whether that finding also reached the operators' list
(`GET /admin/reviews`). Here the stray payment had expired unpaid, so no money was at stake; had the
customer paid both, the operators' list is where the second charge would have to surface.
""")

code(r"""
refresh()
for line in check_capacity():
    pass
print("OK capacity;", "money:", dict(check_money()))
stack.stop()
sandbox_server.stop()
wiring.reset()
print(f"whole notebook: {time.monotonic() - STARTED:.0f} s of system time")
""")


# ================================================================================================
def build() -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for index, (kind, text) in enumerate(CELLS):
        cell = new_markdown_cell(text) if kind == "md" else new_code_cell(text)
        if kind == "code" and index not in SHOWN:
            cell.metadata["tags"] = [HIDE_INPUT]
        nb.cells.append(cell)
    return nb


# Wide tables scroll inside their own box and long words wrap; diagrams shrink to the page.
PAGE_CSS = """
<style>
.jp-RenderedHTMLCommon table { display: block; max-width: 100%; overflow-x: auto; }
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { white-space: normal; overflow-wrap: break-word; vertical-align: top; }
.jp-RenderedHTMLCommon svg, .jp-RenderedSVG svg, .jp-OutputArea-output img { max-width: 100%; height: auto; }
.jp-OutputArea-output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
</style>
"""


def render_html(nb: nbformat.NotebookNode) -> str:
    """The page a reader opens: outputs and prose, the code only of the cells in SHOWN."""
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_input_tags = {HIDE_INPUT}
    body, _ = HTMLExporter(config=config).from_notebook_node(nb)
    return body.replace("</head>", PAGE_CSS + "</head>", 1)


def inputs_digest() -> str:
    """SHA-256 over the INPUTS files' paths and contents."""
    digest = hashlib.sha256()
    for name in INPUTS:
        path = ROOT / name
        for file in (sorted(path.rglob("*.py")) if path.is_dir() else [path]):
            digest.update(file.relative_to(ROOT).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def execute(nb: nbformat.NotebookNode, timeout: int = CELL_TIMEOUT, kernel_name: str = "python3") -> None:
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=timeout, kernel_name=kernel_name,
                   resources={"metadata": {"path": str(ROOT)}}).execute()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=NOTEBOOK)
    parser.add_argument("--no-execute", action="store_true")
    parser.add_argument("--html", action="store_true", help="also render docs/design.html")
    parser.add_argument("--html-only", action="store_true",
                        help="only render docs/design.html from the executed notebook as it is")
    args = parser.parse_args(argv)
    if args.html_only:
        HTML.write_text(render_html(nbformat.read(NOTEBOOK, as_version=4)), encoding="utf-8")
        return 0
    nb = build()
    if not args.no_execute:
        started = time.monotonic()
        try:
            execute(nb)
        except Exception:
            nbformat.write(nb, args.out)  # keep what ran, to see where it failed
            raise
        print(f"executed in {time.monotonic() - started:.0f} s", file=sys.stderr)
        nb.metadata["holdfast"] = {"inputs_sha256": inputs_digest()}
    nbformat.write(nb, args.out)
    if args.html:
        body = render_html(nb)
        HTML.write_text(body, encoding="utf-8")
        print(f"wrote {HTML} ({len(body) // 1024} KiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
