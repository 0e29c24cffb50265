"""What each function of `make bench-coldstart` runs with and how one cold start is started: the
template's functions and their environment as Lambda sets it, the loopback Secrets Manager
stand-in for the secret read at start, (`--first-call`) what each function's main route defers to
its first invocation, the layout (a sam build or the source tree) and the probe, one fresh
interpreter per cold start. Timed (devstack/measure/coldstart.py) or counted by callgrind
(devstack/measure/coldstart_count.py), every cold start goes through the probe here."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

from devstack import sample_events

REPO = Path(__file__).resolve().parents[2]


#: ``--first-call``: the work a function's main route does on its first invocation that its import
#: no longer does (issue 15): importing pydantic and building the request model it validates, here
#: run on the body of the route's sample event. ``at``: where the model lives (this tree, main's).
#: ``builds``: the factories the route calls, run after the validation (issue 49): the route's
#: services with their modules and their AWS clients, the first of which pays botocore's set-up
#: (building a client makes no call). Without them a start that defers its secrets' client to
#: first use would look shorter than it is.
#: What is not listed has nothing deferred to its first call beyond the lazy wiring of every
#: function (services and clients built by their first use, the same before and after); the
#: functions that read an offering of a kind with settings (slots, parking) load pydantic and the
#: kind's settings model on their first such read (see docs/performance.md).
FIRST_CALL: dict[str, dict[str, Any]] = {
    "BookingsApiFunction": {"route": "a hold, POST /events/{id}/bookings", "event": "create_booking.json",
                            "at": ["holdfast.schemas:BookingIn"],
                            "builds": ["holdfast.wiring:waiting_room", "holdfast.wiring:bookings"]},
    "EventsApiFunction": {"route": "POST /events", "event": "create_event.json",
                          "at": ["holdfast.products.events.schemas:EventIn"], "builds": ["holdfast.wiring:catalog"]},
    "CatalogApiFunction": {"route": "the listing, GET /events", "event": "list_events.json", "query": True,
                           "at": ["holdfast.schemas:EventListQuery"], "builds": ["holdfast.wiring:listing"]},
    "WaitlistApiFunction": {"route": "POST /events/{id}/waitlist", "event": "join_waitlist.json",
                            "at": ["holdfast.schemas:WaitlistIn"],
                            "builds": ["holdfast.wiring:waiting_room", "holdfast.wiring:waitlist"]},
    "AdminApiFunction": {"route": "POST /admin/reviews/{id}/resolve", "event": "resolve_review.json",
                         "at": ["holdfast.schemas:ResolveIn", "app:ResolveIn"], "builds": ["holdfast.wiring:reviews"]},
    "ParkingApiFunction": {"route": "POST /lots/{id}/reservations", "event": "create_reservation.json",
                           "at": ["holdfast.products.parking.schemas:ReservationIn"],
                           "builds": ["holdfast.products.parking.wiring:parking"]},
}


def first_call_specs(logical_id: str) -> list[dict[str, Any]]:
    spec = FIRST_CALL.get(logical_id)
    if spec is None:
        return []
    event = sample_events.load(spec["event"])
    given = event.get("queryStringParameters") if spec.get("query") else json.loads(event["body"])
    return [{"at": spec["at"], "input": given, "builds": spec.get("builds", [])}]


# ----------------------------------------------------------------------------------- environment


def functions() -> dict[str, dict[str, Any]]:
    """logical id -> {"dir", "handler_module", "memory", "variables"} for every function."""
    from devstack.aws.template import Resolver, Unresolvable, load_template, resolve_parameters

    template = load_template(REPO / "template.yaml")

    class Placeholders(Resolver):
        # resources are not created here: a name that says what it stands for is enough
        def ref(self, name: str) -> Any:
            try:
                return super().ref(name)
            except Unresolvable:
                return f"holdfast-{name}"

        def get_att(self, logical_id: str, attribute: str) -> Any:
            return f"holdfast-{logical_id}-{attribute}"

    resolver = Placeholders(resolve_parameters(template, {"ProviderShopId": "100500"}),
                            {"AWS::Region": "eu-central-1", "AWS::AccountId": "123456789012",
                             "AWS::StackName": "holdfast", "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com"},
                            template.get("Conditions"), template.get("Mappings"))
    defaults = template["Globals"]["Function"]
    shared = (defaults.get("Environment") or {}).get("Variables") or {}
    found = {}
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        own = (props.get("Environment") or {}).get("Variables") or {}
        variables = {k: resolver.resolve(v) for k, v in {**shared, **own}.items()}
        found[logical_id] = {
            "dir": str(props["CodeUri"]).rstrip("/").split("/")[-1],
            "handler_module": props["Handler"].rpartition(".")[0],
            "memory": props.get("MemorySize", defaults.get("MemorySize", 128)),
            "variables": {k: str(v) for k, v in variables.items()},
        }
    return found


class SecretsStandIn(BaseHTTPRequestHandler):
    """Answers GetSecretValue (the only call a cold start makes) with a well-formed secret."""

    SECRET = {"secret_key": "coldstart-secret", "platform_api_key": "p" * 32, "api_key_hash_key": "h" * 32,
              "admission_token_key": "a" * 32, "pseudonym_key": "n" * 32, "webhook_key": "w" * 32}

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        name = str(request.get("SecretId", "secret"))
        body = json.dumps({"ARN": f"arn:aws:secretsmanager:eu-central-1:123456789012:secret:{name}",
                           "Name": name, "VersionId": "1", "SecretString": json.dumps(self.SECRET)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@contextlib.contextmanager
def secrets_stand_in() -> Iterator[str]:
    """A loopback Secrets Manager endpoint for the cold starts that read the secret."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), SecretsStandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def lambda_variables(logical_id: str, spec: dict[str, Any], task_root: Path, endpoint: str) -> dict[str, str]:
    from tests.parity.lambda_env import lambda_environment

    fn = SimpleNamespace(function_name=f"holdfast-{logical_id}", memory_size=spec["memory"], handler=f"{spec['handler_module']}.lambda_handler",
                         arn=f"arn:aws:lambda:eu-central-1:123456789012:function:holdfast-{logical_id}",
                         environment=spec["variables"])
    env = lambda_environment(fn, SimpleNamespace(region="eu-central-1", aws_endpoint=endpoint), xray_port=9)
    env["LAMBDA_TASK_ROOT"] = str(task_root)
    return env


BASELINE = "boto3"
_PROBE = r"""
import importlib, json, sys, time
sys.path[:0] = json.loads(sys.argv[1])
started, cpu = time.perf_counter(), time.process_time()
importlib.import_module(sys.argv[2])
elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
first = time.process_time()
for spec in json.loads(sys.argv[3]):  # --first-call: build the request model, validate the sample
    for place in spec["at"]:
        module, _, name = place.partition(":")
        try:
            model = getattr(importlib.import_module(module), name)
            break
        except (ImportError, AttributeError):
            continue
    else:
        raise LookupError(f"none of {spec['at']} exists")
    model.model_validate(spec["input"])
    for place in spec.get("builds", []):  # the route's services and their AWS clients (built, not called)
        module, _, name = place.partition(":")
        getattr(importlib.import_module(module), name)()
first = time.process_time() - first
print("\n@@coldstart " + json.dumps({"seconds": elapsed, "cpu": cpu, "first_cpu": first, "modules": sorted(sys.modules)}),
      flush=True)
"""


# ----------------------------------------------------------------------------------- layouts


def stdlib_bytecode(prefix: Path) -> int:
    """Puts the interpreter's own standard library bytecode where `-X pycache_prefix=<prefix>`
    looks for it, and returns how many files: the runtime's standard library comes compiled (an
    installed CPython's does), so ``none`` compiles only what a package ships as source."""
    stdlib = Path(sysconfig.get_path("stdlib"))
    tag = sys.implementation.cache_tag
    count = 0
    for pyc in stdlib.rglob(f"__pycache__/*.{tag}.pyc"):
        if {"site-packages", "test", "idlelib", "tkinter", "turtledemo"} & set(pyc.relative_to(stdlib).parts):
            continue
        target = prefix / pyc.parent.parent.relative_to(pyc.parent.parent.anchor) / pyc.name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(pyc, target)  # nothing to copy where both are on one file system
        except OSError:
            shutil.copyfile(pyc, target)
        count += 1
    return count


class Layout:
    def __init__(self, kind: str, bytecode: str, build_dir: Path | None = None) -> None:
        self.kind, self.bytecode = kind, bytecode
        # none: only the standard library's bytecode (-B writes nothing more); cached: the run's own
        # bytecode cache, never beside
        # the sources (which, in the build layout, are the parity test's cached sam build);
        # shipped: unused (the bytecode read is the build's own __pycache__)
        self.pycache_dir = tempfile.mkdtemp(prefix="coldstart-pyc-")
        if bytecode == "none":
            stdlib_bytecode(Path(self.pycache_dir))
        if kind == "build":
            from tests.parity import build

            started = time.monotonic()
            self.root = build_dir or build.build()
            self.sdk = build.runtime_sdk()
            self.described = f"sam build output {self.root} ({time.monotonic() - started:.0f} s to build or find)"
            if bytecode == "shipped":
                # bytecode an earlier interpreter wrote beside the build would be measured as shipped
                stray = build.stray_bytecode(self.root)
                if stray:
                    raise RuntimeError(f"{len(stray)} .pyc files in {self.root} are not the build's own "
                                       f"(timestamp-checked, e.g. {stray[0]}): rebuild, or pass another --build-dir")
                shipped = sum(1 for _ in (self.root / "HoldfastLayer").rglob("*.pyc"))
                self.described += f"; {shipped} .pyc files shipped in the layer"
        elif bytecode == "shipped":
            raise ValueError("--bytecode shipped measures a sam build's own bytecode: use the build layout")
        else:
            self.described = f"source tree {REPO} in {sys.prefix}"

    def task_root(self, logical_id: str, spec: dict[str, Any]) -> Path:
        return self.root / logical_id if self.kind == "build" else REPO / "functions" / spec["dir"]

    def sys_path(self, task_root: Path | None) -> list[str]:
        if self.kind == "build":
            found = [str(self.root / "HoldfastLayer" / "python"), str(self.sdk)]
        else:
            found = [str(REPO / "layers" / "holdfast")]
        return ([str(task_root)] if task_root else []) + found

    def flags(self) -> list[str]:
        # -S: no site-packages (Lambda's interpreter has none beyond its paths); -I: no PYTHON*
        isolation = ["-S", "-I"] if self.kind == "build" else ["-I"]
        if self.bytecode == "shipped":
            # reads the __pycache__ beside the build's sources, writes none (as on read-only /opt)
            return isolation + ["-B"]
        return isolation + (["-B"] if self.bytecode == "none" else []) + ["-X", f"pycache_prefix={self.pycache_dir}"]


_STEPS_PROBE = r"""
import json, sys, time
sys.path[:0] = json.loads(sys.argv[1])
spent = []
for step in json.loads(sys.argv[2]):  # each in the same interpreter, after the ones before it
    cpu = time.process_time()
    exec(step, {})
    spent.append(time.process_time() - cpu)
print("\n@@steps " + json.dumps(spent), flush=True)
"""


def probe_steps(layout: Layout, task_root: Path | None, env: dict[str, str], steps: list[str]) -> list[float]:
    """CPU seconds of each statement in ``steps``, run one after another in one fresh interpreter
    started as `probe` starts a cold start (``--steps``: which part of an import costs what)."""
    command = [sys.executable, *layout.flags(), "-c", _STEPS_PROBE, json.dumps(layout.sys_path(task_root)),
               json.dumps(steps)]
    done = subprocess.run(command, env=env, cwd=str(task_root or REPO), capture_output=True, text=True, timeout=120)
    marker = [line for line in done.stdout.splitlines() if line.startswith("@@steps ")]
    if done.returncode != 0 or not marker:
        raise RuntimeError(f"the steps failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(marker[-1].removeprefix("@@steps "))


_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def probe(layout: Layout, module: str, task_root: Path | None, env: dict[str, str],
          importtime: bool = False, first_call: list[dict[str, Any]] | None = None,
          instructions: bool = False) -> tuple[dict[str, float], list[str], str]:
    """({"cpu", "wall", "first_cpu"} seconds to import `module` and then to do `first_call`'s
    validations, the modules loaded, -X importtime's report or ""). With `instructions`, the
    interpreter runs under callgrind and "instructions" is every instruction the process ran."""
    command = [sys.executable, *layout.flags(), *(["-X", "importtime"] if importtime else []),
               "-c", _PROBE, json.dumps(layout.sys_path(task_root)), module, json.dumps(first_call or [])]
    if instructions:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
    done = subprocess.run(command, env=env, cwd=str(task_root or REPO), capture_output=True, text=True,
                          timeout=1800 if instructions else 120)
    marker = [line for line in done.stdout.splitlines() if line.startswith("@@coldstart ")]
    if done.returncode != 0 or not marker:
        raise RuntimeError(f"importing {module} from {task_root} failed ({done.returncode}):\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    answer = json.loads(marker[-1].removeprefix("@@coldstart "))
    took = {"cpu": answer["cpu"], "wall": answer["seconds"], "first_cpu": answer["first_cpu"]}
    if instructions:
        counted = _COLLECTED.findall(done.stderr)
        if not counted:
            raise RuntimeError(f"callgrind printed no instruction count for {module}:\n{done.stderr[-2000:]}")
        took["instructions"] = int(counted[-1])
    return took, answer["modules"], done.stderr if importtime else ""
