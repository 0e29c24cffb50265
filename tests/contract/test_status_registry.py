"""Every function reads a booking in every status, whatever else it imported (issue 28, finding 9).

The kinds' own statuses (parking's CHECKED_IN, NO_SHOW, COMPLETED, CANCELLED_NO_REFUND) were
declared as a side effect of importing ``holdfast.kinds``. The notifier never imports it, so on
Lambda, where each function is an interpreter of its own, reading such a booking raised: a whole
expiry bucket's reminders failed, and a lot's ``event.changed`` failed every delivery. The handler
suites import every function into one interpreter, which hid it. Here each handler module is
imported alone, in an interpreter of its own with the function's environment from the template,
and then asked to read a stored booking in each status.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from devstack.measure.coldstart_env import functions, lambda_variables, secrets_stand_in
from holdfast import kinds  # the kinds declare their statuses: the list asked for is complete
from holdfast.domain import lifecycle
from holdfast.domain.statuses import BookingStatus
from tests.support.handlers import REPO

# One parent that loads what every function loads anyway, a forked child per function.
_PROBE = r"""
import importlib, json, os, sys
import boto3, botocore.client, aws_lambda_powertools
sys.path.insert(0, os.path.join(sys.argv[1], "layers", "holdfast"))
jobs = [json.loads(line) for line in sys.stdin]
for job in jobs:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.environ.clear()
        os.environ.update(job["env"])
        sys.path.insert(0, job["task_root"])
        os.chdir(job["task_root"])
        answer = {"name": job["name"], "read": {}, "kinds_at_init": None}
        try:
            importlib.import_module(job["module"])
            answer["kinds_at_init"] = "holdfast.kinds" in sys.modules
            from holdfast.adapters.booking_items import booking_from_item
            for status in job["statuses"]:
                try:
                    booking = booking_from_item({**job["item"], "status": status})
                    answer["read"][status] = str(booking.status)
                except Exception as exc:
                    answer["read"][status] = f"{type(exc).__name__}: {exc}"
        except BaseException as exc:
            answer["error"] = f"{type(exc).__name__}: {exc}"
        with os.fdopen(write, "w") as out:
            json.dump(answer, out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as got:
        print(got.read(), flush=True)
    os.waitpid(pid, 0)
"""

PARKING_BOOKING = {
    "booking_id": "0b6a6d7e-2f0f-4d7e-8a8e-6f1e0b9c4a21", "event_id": "4a7e2c1d-8b3f-4d5e-9f60-1a2b3c4d5e6f",
    "customer_id": "driver-1", "inventory_kind": "parking", "quantity": 1, "amount": "100.00", "currency": "RUB",
    "payment_mode": "one_stage", "hold_expires_at": "2031-06-01T09:40:00.000Z",
    "created_at": "2031-06-01T09:30:00.000Z", "updated_at": "2031-06-01T10:05:00.000Z", "version": 4,
}


def _built_in(owner: str) -> bool:
    """A kind of the deployed package: test kinds (tests/support) declare statuses of their own in
    this interpreter, which no function is meant to know."""
    try:
        return type(kinds.named(owner)).__module__.startswith("holdfast.")
    except LookupError:
        return False


def _every_status() -> list[str]:
    declared = [state.status for owner, states in lifecycle.declarations().items() if _built_in(owner)
                for state in states]
    return [status.value for status in BookingStatus] + declared


@pytest.fixture(scope="module")
def answers() -> dict[str, dict]:
    statuses = _every_status()
    jobs = []
    with secrets_stand_in() as endpoint:
        for lid, spec in functions().items():
            root = REPO / "functions" / spec["dir"]
            jobs.append({"name": lid, "module": spec["handler_module"], "task_root": str(root),
                         "env": lambda_variables(lid, spec, root, endpoint), "statuses": statuses,
                         "item": PARKING_BOOKING})
        done = subprocess.run([sys.executable, "-I", "-c", _PROBE, str(REPO)],
                              input="".join(json.dumps(job) + "\n" for job in jobs), capture_output=True,
                              text=True, timeout=120, check=False)
    found = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"name"')]
    assert len(found) == len(jobs), f"probe failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return {answer["name"]: answer for answer in found}


def test_the_parking_statuses_are_among_those_checked():
    assert {"CHECKED_IN", "NO_SHOW", "COMPLETED", "CANCELLED_NO_REFUND"} <= set(_every_status())


def test_every_function_alone_reads_a_booking_in_every_status(answers):
    assert "NotifierFunction" in answers and not answers["NotifierFunction"]["kinds_at_init"], (
        "the notifier no longer runs without the kinds at init: this test would prove nothing for it")
    broken = {name: {status: got for status, got in answer["read"].items() if got != status}
              for name, answer in answers.items()}
    errors = {name: answer["error"] for name, answer in answers.items() if "error" in answer}
    assert not errors, errors
    assert {name: wrong for name, wrong in broken.items() if wrong} == {}
