"""`make invoke` (devstack/invoke.py): every sample event in events/ run through the Lambda API of
the running local stack by its function, with the response as Lambda gives it; and the make
target itself from a shell, as docs/operations.md shows it."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from devstack import invoke, sample_events
from tests.parity.test_parity import function_for
from tests.support.handlers import REPO

pytestmark = pytest.mark.integration

SAMPLES = sorted(p.name for p in (REPO / "events").glob("*.json"))


def test_every_sample_event_runs_on_its_function(system):
    stack = system["stack"]
    client = stack.boto3_client("lambda")
    for sample in SAMPLES:
        logical_id = function_for(sample, stack)
        name = invoke.function_name(logical_id, stack.stack_name)
        assert name == stack.functions[logical_id].function_name
        payload, error = invoke.invoke(client, name, sample_events.load(sample))
        assert error is None, f"{sample} -> {logical_id}: {payload}"
        if isinstance(payload, dict) and "statusCode" in payload:
            # sample ids name nothing on this stack: answers are 2xx or 4xx, never a fault
            assert payload["statusCode"] < 500, f"{sample} -> {logical_id}: {payload}"
            json.loads(payload["body"] or "null")


def test_make_invoke_prints_the_functions_response(system):
    stack = system["stack"]
    done = subprocess.run(
        ["make", "--no-print-directory", "invoke", "FUNCTION=EventsApiFunction", "EVENT=events/get_event.json",
         f"ENDPOINT={stack.aws_endpoint}", f"PY={sys.executable}"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert answer["statusCode"] == 404 and json.loads(answer["body"])["error"]["code"] == "event_not_found"
    missing = subprocess.run([sys.executable, "-m", "devstack.invoke", "EventsApiFunction", "events/nothing.json",
                              "--endpoint", stack.aws_endpoint], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no event file" in missing.stderr
