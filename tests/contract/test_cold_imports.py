"""Each function's cold start imports what the function uses and not what others do (issue 15).

Every handler module is imported in an interpreter of its own, with the function's environment
from the template (devstack/measure/coldstart.py builds it; the secret read at start is answered on
loopback), and the modules it loaded are held against what the function needs. Modules, not
milliseconds: `make bench-coldstart` measures the time, this only keeps the heavy packages off
the functions that do not use them. To keep it quick, one interpreter loads what every function
loads anyway (boto3, Powertools' logger) and forks a child per function. Each child also reports
which of the project's pydantic models have their validator built (none should be at import:
they are ``defer_build``, built on first validation).
"""
from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from devstack.measure.coldstart_env import FIRST_CALL, first_call_specs, functions, lambda_variables, secrets_stand_in
from tests.support.handlers import REPO
from tests.support.template import template

# Preloaded in the parent: every function needs them (boto3, the logger); pydantic is not.
_FORKING_PROBE = r"""
import importlib, json, os, sys
import boto3, botocore.client, aws_lambda_powertools
sys.path.insert(0, os.path.join(sys.argv[1], "layers", "holdfast"))
jobs, running, out = [json.loads(line) for line in sys.stdin], {}, sys.argv[2]


def built_models():
    # the project's models (the layer's, a handler's) whose core schema and validator exist
    if "pydantic" not in sys.modules:
        return []
    found, todo = [], [sys.modules["pydantic"].BaseModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith(("holdfast", "app")) and sub.__dict__.get("__pydantic_complete__"):
                found.append(f"{sub.__module__}.{sub.__qualname__}")
    return sorted(set(found))


def reap():
    pid, _ = os.wait()
    name, path = running.pop(pid)
    with open(path) as got:
        print(json.dumps({"name": name, **json.load(got)}), flush=True)


for number, job in enumerate(jobs):
    if len(running) >= 2:  # two at a time: the machine's cores
        reap()
    path = os.path.join(out, f"{number}.json")
    pid = os.fork()
    if pid == 0:
        os.environ.clear()
        os.environ.update(job["env"])
        sys.path.insert(0, job["task_root"])
        os.chdir(job["task_root"])
        try:
            importlib.import_module(job["module"])
            answer = {"modules": sorted(sys.modules), "built": built_models()}
        except BaseException as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        with open(path, "w") as result:
            json.dump(answer, result)
        os._exit(0)
    running[pid] = (job["name"], path)
while running:
    reap()
"""

SDK = ("yookassa", "requests", "holdfast.adapters.yookassa_sdk")
#: Functions that call the provider on every invocation, so load its SDK at init.
CALL_THE_PROVIDER_ALWAYS = {"PaymentEventsFunction"}


def _event_sources(props: dict) -> set[str]:
    return {source["Type"] for source in (props.get("Events") or {}).values()}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory) -> dict[str, set[str]]:
    specs = functions()
    jobs = []
    with secrets_stand_in() as endpoint:
        for lid, spec in specs.items():
            root = REPO / "functions" / spec["dir"]
            env = lambda_variables(lid, spec, root, endpoint)
            jobs.append({"name": lid, "module": spec["handler_module"], "task_root": str(root), "env": env})
        # the opt-in X-Ray SDK tracer, on one function
        lid = "ExpireHoldFunction"
        jobs.append({**next(j for j in jobs if j["name"] == lid), "name": "xray-sdk",
                     "env": {**next(j for j in jobs if j["name"] == lid)["env"], "HOLDFAST_XRAY_SDK": "true"}})
        out = tmp_path_factory.mktemp("cold-imports")
        done = subprocess.run([sys.executable, "-I", "-c", _FORKING_PROBE, str(REPO), str(out)],
                              input="".join(json.dumps(job) + "\n" for job in jobs), capture_output=True,
                              text=True, timeout=120, check=False)
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"name"')]
    assert len(answers) == len(jobs), f"probe failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    failed = {a["name"]: a["error"] for a in answers if "error" in a}
    assert not failed, f"handler modules that do not import: {failed}"
    return {a["name"]: set(a["modules"]) | {f"built:{model}" for model in a["built"]} for a in answers}


def _functions() -> dict[str, dict]:
    return {lid: r["Properties"] for lid, r in template()["Resources"].items()
            if r["Type"] == "AWS::Serverless::Function"}


def test_no_function_loads_the_xray_sdk_unless_asked(loaded):
    carrying = sorted(lid for lid in _functions() if "aws_xray_sdk" in loaded[lid])
    assert carrying == [], "the X-Ray SDK is imported at the cold start of " + ", ".join(carrying)
    assert "aws_xray_sdk.core" in loaded["xray-sdk"], "HOLDFAST_XRAY_SDK=true builds Powertools' Tracer"


def test_only_functions_that_always_call_the_provider_load_its_sdk(loaded):
    carrying = {lid for lid in _functions() if any(name in loaded[lid] for name in SDK)}
    assert carrying == CALL_THE_PROVIDER_ALWAYS, (
        f"the provider SDK loads at the cold start of {sorted(carrying - CALL_THE_PROVIDER_ALWAYS)}; "
        f"missing from {sorted(CALL_THE_PROVIDER_ALWAYS - carrying)}")


def test_each_function_loads_only_the_event_machinery_of_its_own_sources(loaded):
    for lid, props in _functions().items():
        sources = _event_sources(props)
        modules = loaded[lid]
        # the API functions route with holdfast.entry.resolver: Powertools' event_handler package imports
        # every resolver it ships (AppSync's with asyncio) and every event data class
        assert "aws_lambda_powertools.event_handler" not in modules, lid
        # the SQS consumers' partial batch failure is holdfast.entry.sqs_batch: Powertools' batch
        # utility brought its event data classes and asyncio
        assert "aws_lambda_powertools.utilities.batch" not in modules, lid
        assert "asyncio" not in modules, lid
        assert ("holdfast.entry.resolver" in modules) == ("Api" in sources), lid
        assert ("holdfast.entry.sqs_batch" in modules) == ("SQS" in sources), lid


def test_no_function_loads_powertools_parameters_for_its_secret(loaded):
    # the secret is one GetSecretValue behind a five-minute cache (adapters/aws.read_secret);
    # Powertools' parameters utility cost every function that checks the secret at start
    carrying = sorted(lid for lid in _functions() if "aws_lambda_powertools.utilities.parameters" in loaded[lid])
    assert carrying == [], "Powertools parameters loads at the cold start of " + ", ".join(carrying)


def test_services_load_only_where_used(loaded):
    # the payment service (and its refunds, conflict cases) only where a route or step uses it on
    # every invocation; the hold path, catalog, waiting room and waitlist routes never load it
    never_payments = {"CatalogApiFunction", "WaitingRoomFunction", "WaitlistApiFunction", "PaymentWebhookFunction",
                      "ExpireHoldFunction", "NotifierFunction", "OutboxRelayFunction", "BookingsApiFunction",
                      "EventsApiFunction", "SweepDueFunction"}
    carrying = sorted(lid for lid in never_payments if "holdfast.services.payments" in loaded[lid])
    assert carrying == [], f"the payment service loads at the cold start of {carrying}"
    assert "holdfast.services.bookings" not in loaded["PaymentWebhookFunction"]


#: Functions that import pydantic at init (the others load it, if ever, on the first request that
#: validates a body, or on the first read of an offering whose kind has a settings model).
PYDANTIC_AT_INIT: set[str] = set()  # none: ParkingApiFunction's routes import their schemas since issue 15


def test_pydantic_loads_at_init_only_where_listed(loaded):
    carrying = {lid for lid in _functions() if "pydantic" in loaded[lid]}
    assert carrying == PYDANTIC_AT_INIT, (
        f"pydantic loads at the cold start of {sorted(carrying - PYDANTIC_AT_INIT)}; "
        f"no longer at that of {sorted(PYDANTIC_AT_INIT - carrying)}: update the list")
    # what used to bring it everywhere: the offering's model, the kinds' settings, every request model
    for lid in _functions():
        for module in ("holdfast.schemas", "holdfast.products.appointments.schemas", "holdfast.products.parking.schemas"):
            assert module not in loaded[lid] or lid in PYDANTIC_AT_INIT, (lid, module)


def test_cryptography_loads_only_when_a_token_is_signed_or_verified(loaded):
    # parking_tokens imports it inside the calls that derive, sign or verify: no function's cold
    # start pays for it (a reservation is HELD when answered; its token comes with CONFIRMED)
    carrying = sorted(lid for lid in _functions() if "cryptography" in loaded[lid])
    assert carrying == [], "cryptography loads at the cold start of " + ", ".join(carrying)


def test_the_message_libraries_load_on_the_first_render_only(loaded):
    # services/messages.py imports Jinja2 (and icalendar, segno for a message's files) inside the
    # render: the notifier's cold start, and every other function's, pays for none of them
    heavy = ("jinja2", "markupsafe", "icalendar", "segno")
    carrying = sorted(lid for lid in _functions() if any(name in loaded[lid] for name in heavy))
    assert carrying == [], "the message libraries load at the cold start of " + ", ".join(carrying)
    assert "holdfast.services.messages" in loaded["NotifierFunction"]


def test_no_request_model_is_built_at_import(loaded):
    # every model of the layer is defer_build: its validator is built on its first validation,
    # so a function pays only for the models its requests use
    built = {lid: sorted(m for m in loaded[lid] if m.startswith("built:")) for lid in _functions()}
    assert {lid: models for lid, models in built.items() if models} == {}


def test_the_first_call_the_bench_times_is_each_route_s_own_model_on_its_sample_event():
    # devstack/measure/coldstart.py --first-call builds these models and validates the sample bodies: the
    # deferred work of each API function's main route, kept honest by failing when one moves
    assert set(FIRST_CALL) <= set(_functions())
    for lid in FIRST_CALL:
        (spec,) = first_call_specs(lid)
        module, _, name = spec["at"][0].partition(":")
        getattr(importlib.import_module(module), name).model_validate(spec["input"])
