"""Traces keep no secrets: with the X-Ray SDK on (XRaySdkTracing=true), Powertools' Tracer would
put every traced method's return value and exception into the segment's metadata by default,
and ours return gate keys, entry and admission tokens, payment links and journals (issue 28,
finding 10)."""
from __future__ import annotations

import json
import re
import subprocess
import sys

from tests.support.handlers import REPO
from tests.support.template import template

# Run apart: building Powertools' Tracer patches botocore for X-Ray in the whole interpreter.
_PROBE = r"""
import contextlib, json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "layers", "holdfast"))
from holdfast.observability import tracer

kept = []


class Subsegment:
    def put_metadata(self, key, value, namespace=None):
        kept.append(repr((key, value)))

    def put_annotation(self, key, value):
        kept.append(repr((key, value)))

    def add_exception(self, exception, stack, remote=False):
        kept.append(repr(exception))


class Provider:
    @contextlib.contextmanager
    def in_subsegment(self, name=None, **kwargs):
        yield Subsegment()


assert tracer._tracer is not None, "HOLDFAST_XRAY_SDK=true builds the Tracer"
tracer._tracer.provider = Provider()


@tracer.capture_method
def issue_gate():
    return {"gate_key": "gk_SECRET-ANSWER"}


@tracer.capture_method
def refuse():
    raise ValueError("token tok_SECRET-ERROR")


@tracer.capture_lambda_handler
def handler(event, context):
    if event.get("fail"):
        raise RuntimeError("key gk_SECRET-HANDLER-ERROR")
    return {"statusCode": 201, "body": json.dumps({"admission_token": "adm_SECRET-HANDLER"})}


issue_gate()
handler({}, None)
for call in (refuse, lambda: handler({"fail": True}, None)):
    try:
        call()
    except Exception:
        pass
print(json.dumps(kept))
"""


def test_traced_answers_and_errors_stay_out_of_the_trace():
    env = {"HOLDFAST_XRAY_SDK": "true", "POWERTOOLS_SERVICE_NAME": "probe", "AWS_DEFAULT_REGION": "eu-west-1",
           "PATH": "/usr/bin:/bin"}   # no POWERTOOLS_TRACER_CAPTURE_*: the code itself must not capture
    done = subprocess.run([sys.executable, "-I", "-c", _PROBE, str(REPO)], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    kept = json.loads(done.stdout.strip().splitlines()[-1])
    assert kept, "the probe traced nothing: it no longer tests the decorators"
    assert not [item for item in kept if "SECRET" in item], kept


def test_the_template_tells_every_tracer_not_to_capture():
    variables = template()["Globals"]["Function"]["Environment"]["Variables"]
    assert variables.get("POWERTOOLS_TRACER_CAPTURE_RESPONSE") == "false"
    assert variables.get("POWERTOOLS_TRACER_CAPTURE_ERROR") == "false"
    for name, resource in template()["Resources"].items():
        own = ((resource.get("Properties") or {}).get("Environment") or {}).get("Variables") or {}
        for variable in ("POWERTOOLS_TRACER_CAPTURE_RESPONSE", "POWERTOOLS_TRACER_CAPTURE_ERROR"):
            assert own.get(variable, "false") == "false", (name, variable)


def test_every_traced_function_goes_through_the_one_tracer():
    # A Tracer built elsewhere would not pass capture_response=False (observability.SdkTracer does).
    built_here = REPO / "layers" / "holdfast" / "holdfast" / "observability.py"
    sources = [*REPO.joinpath("functions").rglob("*.py"), *REPO.joinpath("layers").rglob("*.py"),
               *REPO.joinpath("gate_controller").rglob("*.py")]
    elsewhere = [str(path.relative_to(REPO)) for path in sources
                 if path != built_here and re.search(r"\bTracer\(|import Tracer\b|tracing import", path.read_text())]
    assert elsewhere == []
