"""EmbeddedStack: the whole template running on one embedded moto server plus an API Gateway stand-in,
event-source pollers and in-process Lambda functions. A development tool, never deployed.

    from devstack.aws import EmbeddedStack

    with EmbeddedStack(repo_root=".", aws_port=0, api_port=0, wait_scale=0.01) as stack:
        table = stack.resources["BookingsTable"]
        requests.post(f"{stack.api_url}/events", json={...})
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import threading
import time
import urllib.request
import uuid
import zipfile
from pathlib import Path
from typing import Any

from devstack.organizers import KEY_HASH_KEY, PLATFORM_KEY
from devstack.paysandbox.captcha import SERVER_KEY as CAPTCHA_SERVER_KEY
from holdfast.domain.signatures import public_half
from holdfast.products.events.tickets import PURPOSE as EVENT_KEY_PURPOSE
from holdfast.products.parking.tokens import PURPOSE as LOT_KEY_PURPOSE

from . import emf, mail, runtime, sale_metrics, timecontrol, webhook_receiver
from .clock import StackClock
from .apigw import ApiGatewayServer, routes_from_template
from .throttling import StageThrottle
from .clients import EdgeSession
from .edge import distribution_page_headers
from .pollers import DynamoDbStreamPoller, ScheduleInvoker, SqsPoller, _Poller, rate_seconds
from .runtime import LocalFunction
from .template import (
    Resolver,
    RulesViolated,
    broken_rules,
    creation_order,
    load_template,
    prepare_sam_template,
    resolve_parameters,
    sam_transform,
)

LOG = logging.getLogger("devstack.aws")

ACCOUNT_ID = "123456789012"  # moto's default account
DEFAULT_REGION = "eu-central-1"
DUMMY_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}
# Local-only provider credentials; the payment sandbox accepts exactly these. Never real values.
LOCAL_PROVIDER_SECRET = {"secret_key": "sandbox_secret_local_only"}
#: The signing roots of the local stack (parking's passes, events' tickets), each with the published
#: list of its public key that the checking functions and devices hold instead (docs/deploy.md).
LOCAL_PARKING_KEY_SECRET = {"master_seed": "local-parking-master-seed-not-secret"}
LOCAL_TICKET_KEY_SECRET = {"master_seed": "local-ticket-master-seed-not-secret-either"}
LOCAL_PARKING_PUBLIC_KEYS = {"public_keys": [public_half(LOCAL_PARKING_KEY_SECRET["master_seed"].encode(),
                                                         LOT_KEY_PURPOSE)]}
LOCAL_TICKET_PUBLIC_KEYS = {"public_keys": [public_half(LOCAL_TICKET_KEY_SECRET["master_seed"].encode(),
                                                        EVENT_KEY_PURPOSE)]}
#: Every secret of the local stack by the template parameter naming it (one per purpose, as on AWS):
#: local-only values, never real ones. Organizers sign in with their own keys, stored hashed
#: under the hash key (devstack/organizers.py seeds two).
LOCAL_SECRETS = {
    "ProviderSecretName": LOCAL_PROVIDER_SECRET,
    "PlatformKeySecretName": {"platform_api_key": PLATFORM_KEY},
    "OrganizerKeyHashSecretName": {"api_key_hash_key": KEY_HASH_KEY},
    # HMAC-SHA256 key of waiting-room admission tokens (holdfast.domain.admission)
    "AdmissionTokenSecretName": {"admission_token_key": "local-admission-token-key-not-secret"},
    "PseudonymSecretName": {"pseudonym_key": "local-pseudonym-key-not-secret"},
    "ParkingKeySecretName": LOCAL_PARKING_KEY_SECRET,
    "TicketKeySecretName": LOCAL_TICKET_KEY_SECRET,
    "ParkingPublicKeysSecretName": LOCAL_PARKING_PUBLIC_KEYS,
    "TicketPublicKeysSecretName": LOCAL_TICKET_PUBLIC_KEYS,
    # the key webhook endpoints' signing secrets are derived from (holdfast.domain.webhooks)
    "WebhookKeySecretName": {"webhook_key": "local-webhook-key-not-secret"},
    # the server key of the challenge verifier, the payment sandbox's stand-in of SmartCaptcha's
    "CaptchaSecretName": {"server_key": CAPTCHA_SERVER_KEY},
    # HMAC-SHA256 key of the stored keys of holds' network addresses (holdfast.domain.holder_address)
    "HolderKeySecretName": {"holder_key": "local-holder-key-not-secret"},
}


#: The address the local stack's notifications come from (a verified identity in the emulator's SES).
LOCAL_MAIL_SENDER = "bookings@holdfast.localhost"


def local_parameters(api_url: str) -> dict[str, Any]:
    """Parameter overrides for running template.yaml on this machine (template defaults otherwise)."""
    return {
        "ProviderApiUrl": "http://127.0.0.1:8090/v3",
        "ProviderShopId": "100500",
        # holds' challenges are checked by the sandbox's stand-in of SmartCaptcha's validate API
        "CaptchaVerifyUrl": "http://127.0.0.1:8090/smartcaptcha/validate",
        # and the pages load its stand-in widget from there (the Content-Security-Policy names it)
        "CaptchaWidgetOrigin": "http://127.0.0.1:8090",
        "AllowedWebhookNetworks": "127.0.0.1/32",
        # webhooks may reach the local receiver (/dev/webhooks) over plain http; never on AWS
        "WebhookLocalNetworks": "127.0.0.0/8",
        "CustomerIdentitySource": "header",
        "DeploymentKind": "local",
        # the booking page of web/, which the API stand-in serves on the same origin
        "PaymentReturnUrl": f"{api_url}/booking.html?id={{booking_id}}",
        "DefaultHoldTtlSeconds": "600",
        # mail goes through the emulator's SES (verified below) and lands in the inbox at /dev/mail;
        # the confirmation link of an address points at this stack's API
        "NotificationsSender": LOCAL_MAIL_SENDER,
        "ContactConfirmUrl": f"{api_url}/contacts/confirm",
        "TransferAcceptUrl": f"{api_url}/bookings/{{booking_id}}/transfer/accept",
        "TransferPageUrl": f"{api_url}/transfer.html",
        # no reservations: locally a function's reserved concurrency sizes its worker pool, and the
        # template's values would start more processes than this machine (and the bench's settings) want
        **dict.fromkeys(("PaymentEventsReservedConcurrency", "ExpireHoldReservedConcurrency",
                         "ReconcilePaymentReservedConcurrency", "CancelEventReservedConcurrency",
                         "ParkingApiReservedConcurrency", "DoorsApiReservedConcurrency"), "0"),
    }


def _tiny_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("README.txt", "The local stack runs this function's code in-process from CodeUri.\n")
    return buffer.getvalue()


def _quiet_moto_server_class() -> Any:
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    class QuietRequestHandler(MotoRequestHandler):
        """Keeps a client's connection open between requests (issue 47, fifth pass).

        Werkzeug's server answers every request with `Connection: close`, since it cannot tell
        whether the app read the whole body; so each AWS call a function made was a new TCP
        connection, a new server thread and a name lookup: about half of a call's CPU, and a hold
        expiry tick makes a hundred-odd calls (empty shard queries). Here a body of a stated
        length is read off the socket before the app sees it (from memory), so the stream is at
        the next request when the answer is written, and the close is left out. A chunked body,
        or none stated on a method that may carry one, keeps werkzeug's close. An idle kept
        connection ends after `timeout` seconds (urllib3 reconnects). Werkzeug's read of what is left on
        the socket after an answer reads the (empty) buffered body instead."""

        timeout = 30
        disable_nagle_algorithm = True  # an answer is several small writes: no 40 ms delayed-ACK stall

        def make_environ(self) -> dict[str, Any]:
            environ = super().make_environ()
            length = environ.get("CONTENT_LENGTH") or ""
            self._drained = "wsgi.input_terminated" not in environ and (
                length.isdigit() or environ.get("REQUEST_METHOD") in ("GET", "HEAD", "DELETE", "OPTIONS"))
            if self._drained:
                environ["wsgi.input"] = io.BytesIO(self.rfile.read(int(length)) if length.isdigit() else b"")
                # werkzeug reads whatever the socket holds after answering (it expects a close):
                # with the body read, that would be the client's next request; it reads nothing
                self._stream, self.rfile = self.rfile, io.BytesIO()
            return environ

        def run_wsgi(self) -> None:
            self._drained, self._stream = False, None
            try:
                super().run_wsgi()
            finally:
                if self._stream is not None:
                    self.rfile = self._stream

        def send_header(self, keyword: str, value: str) -> None:
            if keyword.lower() == "connection" and value.lower() == "close" and getattr(self, "_drained", False):
                return  # the body was read whole: the connection can carry the next request
            super().send_header(keyword, value)

        def log(self, type: str, message: str, *args: Any) -> None:  # noqa: A002 - werkzeug's name
            LOG.debug("moto: " + message, *args)

    class QuietMotoServer(ThreadedMotoServer):
        """ThreadedMotoServer whose request log goes to our logger at DEBUG, not to stderr."""

        def _server_entry(self) -> None:
            app = DomainDispatcherApplication(create_backend_app)
            self._server = make_server(self._ip_address, self._port, app, True,
                                       request_handler=QuietRequestHandler)
            self._server_ready_event.set()
            self._server.serve_forever(poll_interval=0.1)

    return QuietMotoServer


def _QuietMotoServer(**kwargs: Any) -> Any:  # noqa: N802 - behaves as a class
    return _quiet_moto_server_class()(**kwargs)


def _record_worker_answer(fn: LocalFunction, answer: dict[str, Any]) -> None:
    from . import calls

    if answer.get("calls"):
        calls.merge(answer["calls"])
    if answer.get("emf"):
        emf.keep(fn.function_name, answer["emf"])


class EmbeddedStack:
    """The template deployed on an embedded AWS emulator. One active instance per process (moto's
    state and the handlers' environment variables are process-wide)."""

    _active_lock = threading.Lock()
    _active: "EmbeddedStack | None" = None

    def __init__(
        self,
        repo_root: str | os.PathLike[str] = ".",
        host: str = "127.0.0.1",
        aws_port: int = 4566,
        api_port: int = 3000,
        parameters: dict[str, Any] | None = None,
        wait_scale: float = 1.0,
        *,
        template: str = "template.yaml",
        region: str = DEFAULT_REGION,
        stack_name: str = "holdfast",
        secrets: dict[str, Any] | None = None,
        poll_interval: float = 0.1,
        logger: logging.Logger | None = None,
        lambda_workers: bool = False,
        default_concurrency: int | None = None,
        concurrency: dict[str, int] | None = None,
        dynamodb: str = "moto",
        api_throttling: bool = True,
        worker_output: bool = True,
    ):
        self.repo_root = Path(repo_root).resolve()
        self.template_path = (self.repo_root / template).resolve()
        self.host = host
        self.region = region
        self.stack_name = stack_name
        self.wait_scale = float(wait_scale)
        self.poll_interval = poll_interval
        self.logger = logger or LOG
        self._requested_aws_port = aws_port
        self._requested_api_port = api_port
        self._parameter_overrides = dict(parameters or {})
        self._secrets_override = secrets
        # Lambda like Lambda: a pool of worker processes per function (devstack/aws/workers.py);
        # False runs every handler in this process, one invocation at a time (the tests' default)
        self.lambda_workers = bool(lambda_workers)
        self.default_concurrency = default_concurrency
        self.concurrency_overrides = dict(concurrency or {})
        if dynamodb not in ("moto", "local"):
            raise ValueError("dynamodb is 'moto' or 'local' (DynamoDB Local, devstack/dynamodb_local.py)")
        self.dynamodb = dynamodb
        self.dynamodb_endpoint: str = ""  # DynamoDB Local's, when dynamodb="local"
        self._dynamodb_local: Any = None
        self.api_throttling = api_throttling
        self.worker_output = worker_output  # False: what handlers in workers print is dropped (the bench)

        self.aws_endpoint: str = ""
        self.api_url: str = ""
        self.parameters: dict[str, Any] = {}
        self.resources: dict[str, Any] = {}  # logical id -> what Ref returns (name, URL, ARN)
        self.attributes: dict[str, dict[str, Any]] = {}  # logical id -> Fn::GetAtt values
        self.resource_types: dict[str, str] = {}
        self.outputs: dict[str, Any] = {}
        self.functions: dict[str, LocalFunction] = {}  # logical id -> function
        self.pollers: dict[str, _Poller] = {}  # mapping logical id -> poller
        self.environment: dict[str, str] = {}  # what was set process-wide
        self.cfn_template: dict[str, Any] = {}
        self.secrets: dict[str, str] = {}  # secret name -> ARN
        self._code_dirs: dict[str, Path] = {}
        self._mappings: dict[str, dict[str, Any]] = {}
        self._schedules: dict[str, dict[str, Any]] = {}
        self.mail_feedback_topics: dict[str, str] = {}   # SES configuration set -> its events' topic

        self._moto: Any = None
        self._api: ApiGatewayServer | None = None
        self._saved_env: dict[str, str | None] = {}
        self._added_sys_path: list[str] = []
        self._started = False
        self._saved_config: dict[str, Any] = {}
        #: the stack's clock and idleness (devstack/aws/clock.py, timecontrol.py), made at start
        self.clock: StackClock | None = None
        self.time: timecontrol.StackTime | None = None

    # ------------------------------------------------------------------------------------------
    # lifecycle
    # ------------------------------------------------------------------------------------------
    def __enter__(self) -> "EmbeddedStack":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> "EmbeddedStack":
        with EmbeddedStack._active_lock:
            if EmbeddedStack._active is not None:
                raise RuntimeError("another EmbeddedStack is running in this process; stop it first")
            EmbeddedStack._active = self
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        t0 = time.monotonic()
        runtime.install_patches()
        runtime.set_wait_scale(self.wait_scale)
        self._started = True

        # the API server binds first: its URL is a parameter value (PaymentReturnUrl)
        web = self.repo_root / "web"
        self._api = ApiGatewayServer([], self.host, self._requested_api_port, ACCOUNT_ID,
                                     static_dir=web if web.is_dir() else None)
        self.api_url = f"http://{self.host}:{self._api.port}"

        self._start_moto()
        if self.dynamodb == "local":
            from devstack.dynamodb_local import DynamoDBLocal

            self._dynamodb_local = DynamoDBLocal(quiet=True).start()
            self.dynamodb_endpoint = self._dynamodb_local.endpoint
        emf.install(self.region, runtime._SERVICE_LOCKS["logs"])
        # the clock first: every reading of the time from here on (the functions', moto's) is its
        self.clock = StackClock()
        self.clock.install()
        self.time = timecontrol.StackTime(self, self.clock)
        # the local webhook receiver (/dev/webhooks): arrivals stamped on the stack's clock
        self.webhook_receiver = webhook_receiver.WebhookReceiver(self.clock.now_seconds)
        self._set_process_environment()
        self._deploy()
        self._seed_organizers()
        self._verify_mail_sender()
        self._start_pollers()
        self._api.local_pages[mail.PREFIX] = self._local_inbox()
        self._api.local_pages[timecontrol.PREFIX] = self.time.page
        self._api.local_pages[webhook_receiver.PREFIX] = self.webhook_receiver.page
        metrics = sale_metrics.for_stack(self)
        if metrics is not None:
            self._api.local_endpoints[sale_metrics.PATH] = metrics
        self._api.start()
        self.logger.info("local stack up in %.2fs: AWS %s, API %s, %d resources",
                         time.monotonic() - t0, self.aws_endpoint, self.api_url, len(self.resources))

    def stop(self) -> None:
        try:
            for poller in self.pollers.values():
                poller.stop()
            if self._api is not None:
                self._api.stop()
                self._api = None
            for fn in self.functions.values():
                if fn.pool is not None:
                    fn.pool.close()
                    fn.pool = None
            if self._dynamodb_local is not None:
                self._dynamodb_local.stop()
                self._dynamodb_local = None
            if self._moto is not None:
                self._moto.stop()
                self._moto = None
            if self._started:
                emf.uninstall()
                self._reset_moto()
                runtime.clear_functions()
                runtime.set_wait_scale(1.0)
                self._restore_config()
                for name in [m for m in sys.modules if m.startswith("_devstack_lambda_")]:
                    del sys.modules[name]
                for entry in self._added_sys_path:
                    if entry in sys.path:
                        sys.path.remove(entry)
                self._added_sys_path.clear()
                self._restore_environment()
                if self.clock is not None:
                    self.clock.uninstall()
                    self.clock = None
                self._started = False
        finally:
            with EmbeddedStack._active_lock:
                if EmbeddedStack._active is self:
                    EmbeddedStack._active = None

    # ------------------------------------------------------------------------------------------
    # helpers for callers
    # ------------------------------------------------------------------------------------------
    def advance_clock(self, seconds: float, settle_seconds: float = 60.0) -> dict[str, Any]:
        """Move the stack's clock `seconds` forward, firing what falls due in order and settling
        after each step, each within `settle_seconds` (devstack/aws/clock.py); the same as
        POST /dev/clock."""
        assert self.time is not None, "the stack is not running"
        return self.time.advance(seconds, settle_seconds)

    def wait_idle(self, timeout: float = 60.0) -> dict[str, Any]:
        """Wait until nothing runs or waits to run (devstack/aws/timecontrol.py); TimeoutError
        naming what stayed busy."""
        assert self.time is not None, "the stack is not running"
        return self.time.wait_idle(timeout)

    def boto3_client(self, service: str, **kwargs: Any) -> Any:
        """A boto3 client for `service` pointed at the emulator (thread-safe to use), made by a
        localstack_client session for this stack's edge endpoint (see devstack/aws/clients.py)."""
        return self.session().client(service, **kwargs)

    def session(self) -> EdgeSession:
        """A `localstack_client` session for this stack's edge endpoint (its `.client` and
        `.resource` reach this stack even while another stack's AWS_ENDPOINT_URL is set; DynamoDB
        and its streams reach DynamoDB Local when the stack uses it)."""
        overrides = {"dynamodb": self.dynamodb_endpoint, "dynamodbstreams": self.dynamodb_endpoint} \
            if self.dynamodb_endpoint else None
        return EdgeSession(self.aws_endpoint, self.region, overrides)

    def invoke(self, logical_id: str, event: Any) -> Any:
        """Run a function's handler in-process with `event` (raises what the handler raises)."""
        return self.functions[logical_id].invoke(event)

    # ------------------------------------------------------------------------------------------
    # moto server
    # ------------------------------------------------------------------------------------------
    def _start_moto(self) -> None:
        self._reset_moto()
        # port 0: the OS picks a free port at bind time (no race); MOTO_PORT follows below
        self._moto = _QuietMotoServer(ip_address=self.host, port=self._requested_aws_port, verbose=False)
        self._moto.start()
        host, port = self._moto.get_host_and_port()
        self.aws_endpoint = f"http://{self.host}:{port}"
        # moto's Step Functions and Lambda internals call back to localhost:$MOTO_PORT
        self._setenv("MOTO_PORT", str(port))
        self._setenv("MOTO_HOST", self.host)
        from moto.core.config import default_user_config

        self._saved_config = {
            "stepfunctions": dict(default_user_config.get("stepfunctions", {})),
            "lambda": dict(default_user_config.get("lambda", {})),
        }
        config = {"stepfunctions": {"execute_state_machine": True}}
        request = urllib.request.Request(
            f"{self.aws_endpoint}/moto-api/config", data=json.dumps(config).encode(), method="POST",
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - local only
            response.read()

    def _restore_config(self) -> None:
        if not self._saved_config:
            return
        from moto.core.config import default_user_config

        for key, value in self._saved_config.items():
            default_user_config[key] = value  # type: ignore[literal-required]
        self._saved_config = {}

    @staticmethod
    def _reset_moto() -> None:
        from moto.moto_api._internal.models import moto_api_backend

        moto_api_backend.reset()

    # ------------------------------------------------------------------------------------------
    # environment
    # ------------------------------------------------------------------------------------------
    def _setenv(self, key: str, value: str) -> None:
        if key not in self._saved_env:
            self._saved_env[key] = os.environ.get(key)
        os.environ[key] = value
        self.environment[key] = value

    def _restore_environment(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()

    def _set_process_environment(self) -> None:
        if self.clock is not None:   # holdfast.clock reads the stack's time from its file
            self._setenv(*self.clock.variable)
        self._setenv("AWS_ENDPOINT_URL", self.aws_endpoint)
        self._setenv("AWS_DEFAULT_REGION", self.region)
        self._setenv("AWS_REGION", self.region)
        for key, value in DUMMY_CREDENTIALS.items():
            self._setenv(key, value)
        # a profile or a per-service endpoint from the developer's shell would win over ours
        if self.dynamodb_endpoint:
            # per-service endpoints win over AWS_ENDPOINT_URL: DynamoDB and its streams go to DynamoDB Local
            self._setenv("AWS_ENDPOINT_URL_DYNAMODB", self.dynamodb_endpoint)
            self._setenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS", self.dynamodb_endpoint)
        for key in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL_DYNAMODB",
                    "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_SFN", "AWS_ENDPOINT_URL_SECRETS_MANAGER",
                    "AWS_ENDPOINT_URL_LAMBDA"):
            if key in os.environ and key not in self.environment:
                self._saved_env.setdefault(key, os.environ[key])
                del os.environ[key]

    # ------------------------------------------------------------------------------------------
    # deployment
    # ------------------------------------------------------------------------------------------
    def _deploy(self) -> None:
        sam = load_template(self.template_path)
        overrides = {**local_parameters(self.api_url), **self._parameter_overrides}
        declared = sam.get("Parameters") or {}
        overrides = {k: v for k, v in overrides.items() if k in declared}
        self.parameters = resolve_parameters(sam, overrides)
        pseudo = {
            "AWS::Region": self.region,
            "AWS::AccountId": ACCOUNT_ID,
            "AWS::Partition": "aws",
            "AWS::StackName": self.stack_name,
            "AWS::StackId": f"arn:aws:cloudformation:{self.region}:{ACCOUNT_ID}:stack/"
                            f"{self.stack_name}/{uuid.uuid4()}",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::NotificationARNs": [],
        }
        prepared, code_dirs = prepare_sam_template(sam, self.repo_root)
        if "Transform" in sam:
            cfn = sam_transform(prepared, {**self.parameters, **pseudo}, self.region)
        else:
            cfn = prepared
        # as CloudFormation does: the Rules first, and nothing is created when one is broken
        broken = broken_rules(cfn, Resolver(self.parameters, pseudo, cfn.get("Conditions"), cfn.get("Mappings")))
        if broken:
            raise RulesViolated("the template's Rules refuse these parameters: " + "; ".join(broken))
        self.cfn_template = cfn
        self._code_dirs = code_dirs
        resolver = Resolver(self.parameters, pseudo, cfn.get("Conditions"), cfn.get("Mappings"))
        self._resolver = resolver

        clients: dict[str, Any] = {}

        def client(name: str) -> Any:
            if name not in clients:
                clients[name] = self.boto3_client(name)
            return clients[name]

        self._clients = client
        resources = cfn.get("Resources") or {}
        for logical_id in creation_order(resources):
            resource = resources[logical_id]
            condition = resource.get("Condition")
            if condition and not resolver.condition(condition):
                continue
            rtype = resource["Type"]
            creator = getattr(self, "_create_" + rtype.replace("::", "_").replace("AWS_", "", 1), None)
            if creator is None:
                # not resolved either: such a resource (the web pages' CloudFront distribution)
                # may name attributes of others that exist only on AWS
                self.logger.debug("not emulated, recorded only: %s (%s)", logical_id, rtype)
                ref, attrs = logical_id, {}
            else:
                ref, attrs = creator(logical_id, resolver.resolve(resource.get("Properties") or {}))
            resolver.refs[logical_id] = ref
            resolver.attributes[logical_id] = attrs
            self.resources[logical_id] = ref
            self.attributes[logical_id] = attrs
            self.resource_types[logical_id] = rtype

        # SAM-level aliases (the translator suffixes layer ids with a content hash)
        for logical_id, rtype in list(self.resource_types.items()):
            if rtype == "AWS::Lambda::LayerVersion":
                key = (resources[logical_id].get("Properties") or {}).get("Content", {}).get("S3Key", "")
                alias = key.rsplit(".zip", 1)[0]
                if alias and alias not in self.resources:
                    self.resources[alias] = self.resources[logical_id]
                    self.attributes[alias] = self.attributes[logical_id]

        for name, output in (cfn.get("Outputs") or {}).items():
            try:
                self.outputs[name] = resolver.resolve(output.get("Value"))
            except Exception as exc:  # noqa: BLE001
                self.logger.debug("output %s not resolvable locally: %s", name, exc)

        self._configure_functions()
        self._create_secrets()
        stages = {}
        method_settings: list[dict[str, Any]] = []
        for logical_id, rtype in self.resource_types.items():
            if rtype == "AWS::ApiGateway::Stage":
                props = resolver.resolve(resources[logical_id].get("Properties") or {})
                api = (resources[logical_id].get("Properties") or {}).get("RestApiId", {})
                if isinstance(api, dict) and "Ref" in api:
                    stages[api["Ref"]] = props.get("StageName", "Prod")
                method_settings += props.get("MethodSettings") or []
        api_ids = {lid: ref for lid, ref in self.resources.items()
                   if self.resource_types.get(lid) == "AWS::ApiGateway::RestApi"}
        assert self._api is not None
        self._api.routes = routes_from_template(cfn, self.functions, api_ids, stages)
        if self.api_throttling and method_settings:
            self._api.throttle = StageThrottle(method_settings)
        headers = distribution_page_headers(resources, resolver.resolve)
        if headers:
            self._api.page_headers = headers

    # -- per resource type ---------------------------------------------------------------------
    def _physical_name(self, logical_id: str, limit: int = 64, suffix: str = "") -> str:
        name = f"{self.stack_name}-{logical_id}"
        return name[: limit - len(suffix)] + suffix

    def _create_DynamoDB_Table(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        ddb = self._clients("dynamodb")
        name = p.get("TableName") or self._physical_name(logical_id, 255)
        args: dict[str, Any] = {
            "TableName": name,
            "AttributeDefinitions": p["AttributeDefinitions"],
            "KeySchema": p["KeySchema"],
            "BillingMode": p.get("BillingMode", "PROVISIONED"),
        }
        if args["BillingMode"] == "PROVISIONED":
            args["ProvisionedThroughput"] = {k: int(v) for k, v in p["ProvisionedThroughput"].items()}
        for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            if p.get(key):
                args[key] = p[key]
        stream = p.get("StreamSpecification")
        if stream:
            args["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": stream["StreamViewType"]}
        if p.get("SSESpecification"):
            args["SSESpecification"] = {"Enabled": bool(p["SSESpecification"].get("SSEEnabled"))}
        description = ddb.create_table(**args)["TableDescription"]
        ttl = p.get("TimeToLiveSpecification")
        if ttl and str(ttl.get("Enabled")).lower() == "true":
            ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={
                "AttributeName": ttl["AttributeName"], "Enabled": True})
        pitr = p.get("PointInTimeRecoverySpecification") or {}
        # DynamoDB Local has no backups (UnknownOperationException): nothing to recover locally anyway
        if str(pitr.get("PointInTimeRecoveryEnabled")).lower() == "true" and self.dynamodb == "moto":
            ddb.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
                "PointInTimeRecoveryEnabled": True})
        # DynamoDB Local names its tables in a region and account of its own: the template's
        # policies and variables keep the stack's (the stream ARN is DynamoDB Local's, the pollers read it)
        attrs = {"Arn": f"arn:aws:dynamodb:{self.region}:{ACCOUNT_ID}:table/{name}"
                 if self.dynamodb == "local" else description["TableArn"]}
        if description.get("LatestStreamArn"):
            attrs["StreamArn"] = description["LatestStreamArn"]
        return name, attrs

    _SQS_ATTRIBUTES = ("DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod",
                       "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout", "FifoQueue",
                       "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit",
                       "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled")

    def _create_SQS_Queue(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        sqs = self._clients("sqs")
        fifo = str(p.get("FifoQueue", "false")).lower() == "true"
        name = p.get("QueueName") or self._physical_name(logical_id, 80, ".fifo" if fifo else "")
        attributes = {}
        for key in self._SQS_ATTRIBUTES:
            if key in p:
                value = p[key]
                attributes[key] = str(value).lower() if isinstance(value, bool) else str(value)
        for key in ("RedrivePolicy", "RedriveAllowPolicy"):
            if key in p:
                attributes[key] = p[key] if isinstance(p[key], str) else json.dumps(p[key])
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        return url, {"Arn": arn, "QueueName": name, "QueueUrl": url}

    def _create_S3_Bucket(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        # the emulator's S3 serves objects and presigned GETs (the export jobs' files); its
        # encryption, public access block and lifecycle are recorded only (nothing expires locally)
        s3 = self._clients("s3")
        name = p.get("BucketName") or self._physical_name(logical_id, 63).lower()
        s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": self.region})
        return name, {"Arn": f"arn:aws:s3:::{name}", "DomainName": f"{name}.s3.amazonaws.com",
                      "RegionalDomainName": f"{name}.s3.{self.region}.amazonaws.com"}

    def _create_Events_Rule(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        events = self._clients("events")
        name = p.get("Name") or self._physical_name(logical_id, 64)
        kwargs: dict[str, Any] = {"Name": name, "State": p.get("State", "ENABLED")}
        for key in ("ScheduleExpression", "Description"):
            if p.get(key):
                kwargs[key] = p[key]
        if p.get("EventPattern"):
            kwargs["EventPattern"] = p["EventPattern"] if isinstance(p["EventPattern"], str) else json.dumps(p["EventPattern"])
        if p.get("EventBusName"):
            kwargs["EventBusName"] = p["EventBusName"]
        arn = events.put_rule(**kwargs)["RuleArn"]
        if p.get("EventPattern"):
            # A pattern rule's targets are real in moto: PutEvents on the bus delivers matching
            # events to SQS queues itself (Lambda targets would need Docker; use a queue instead).
            targets = [{"Id": t.get("Id") or f"target{i}", "Arn": t["Arn"]}
                       for i, t in enumerate(p.get("Targets") or []) if ":sqs:" in t.get("Arn", "")]
            skipped = [t.get("Arn") for t in p.get("Targets") or [] if ":sqs:" not in t.get("Arn", "")]
            if skipped:
                self.logger.warning("rule %s: only SQS targets are emulated; not delivering to %s", logical_id, skipped)
            if targets:
                bus = {"EventBusName": p["EventBusName"]} if p.get("EventBusName") else {}
                events.put_targets(Rule=name, Targets=targets, **bus)
        if p.get("ScheduleExpression"):
            for target in p.get("Targets") or []:
                self._schedules[logical_id] = {"rule_arn": arn, "expression": p["ScheduleExpression"],
                                               "target": target.get("Arn", "")}
        return name, {"Arn": arn}

    def _create_Events_EventBus(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        name = p.get("Name") or self._physical_name(logical_id, 256)
        arn = self._clients("events").create_event_bus(Name=name)["EventBusArn"]
        return name, {"Arn": arn, "Name": name}

    def _create_SQS_QueuePolicy(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        sqs = self._clients("sqs")
        document = p.get("PolicyDocument") or {}
        for url in p.get("Queues") or []:
            sqs.set_queue_attributes(QueueUrl=url, Attributes={
                "Policy": document if isinstance(document, str) else json.dumps(document)})
        return logical_id, {}

    def _create_IAM_Role(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        iam = self._clients("iam")
        name = p.get("RoleName") or self._physical_name(logical_id, 64)
        document = p.get("AssumeRolePolicyDocument") or {}
        role = iam.create_role(RoleName=name, Path=p.get("Path", "/"),
                               AssumeRolePolicyDocument=document if isinstance(document, str)
                               else json.dumps(document))["Role"]
        # Policies are not enforced by moto (nor here): recorded only.
        return name, {"Arn": role["Arn"], "RoleId": role["RoleId"]}

    def _create_Lambda_LayerVersion(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        code_key = (p.get("Content") or {}).get("S3Key", "")
        sam_id = code_key.rsplit(".zip", 1)[0]
        code_dir = self._code_dirs.get(sam_id)
        if code_dir is not None:
            # what `sam build` puts under /opt/python: the layer's ContentUri (and python/ inside it)
            for entry in (code_dir / "python", code_dir):
                if entry.is_dir() and str(entry) not in sys.path:
                    sys.path.insert(0, str(entry))
                    self._added_sys_path.append(str(entry))
        layer = self._clients("lambda").publish_layer_version(
            LayerName=p.get("LayerName") or self._physical_name(sam_id or logical_id, 64),
            Description=p.get("Description", ""), Content={"ZipFile": _tiny_zip()},
            CompatibleRuntimes=p.get("CompatibleRuntimes", []))
        return layer["LayerVersionArn"], {}

    def _create_Lambda_Function(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        lam = self._clients("lambda")
        name = p.get("FunctionName") or self._physical_name(logical_id, 64)
        env = {k: str(v) for k, v in ((p.get("Environment") or {}).get("Variables") or {}).items()}
        code_key = (p.get("Code") or {}).get("S3Key", "")
        code_dir = self._code_dirs.get(code_key.rsplit(".zip", 1)[0])
        args: dict[str, Any] = {
            "FunctionName": name, "Runtime": p.get("Runtime", "python3.12"), "Role": p["Role"],
            "Handler": p.get("Handler", "app.lambda_handler"), "Code": {"ZipFile": _tiny_zip()},
            "Timeout": int(p.get("Timeout", 3)), "MemorySize": int(p.get("MemorySize", 128)),
            "Description": p.get("Description", ""), "Environment": {"Variables": env},
        }
        if p.get("Architectures"):
            args["Architectures"] = p["Architectures"]
        if p.get("Layers"):
            args["Layers"] = p["Layers"]
        arn = lam.create_function(**args)["FunctionArn"]
        if code_dir is not None:
            self.functions[logical_id] = LocalFunction(
                logical_id=logical_id, function_name=name, arn=arn, code_dir=code_dir,
                handler=args["Handler"], timeout=args["Timeout"], memory_size=args["MemorySize"],
                environment=env, reserved_concurrency=int(p["ReservedConcurrentExecutions"])
                if p.get("ReservedConcurrentExecutions") is not None else None)
        else:
            self.logger.warning("function %s has no local CodeUri; invocations will fail", logical_id)
        return name, {"Arn": arn}

    # A published version and its alias (AutoPublishAlias: the SnapStart functions, docs/performance.md):
    # the local stack runs each function's one code, so both stand for the function itself; a Ref
    # gives the qualified ARN, as on AWS, and an alias's invocations reach the function (apigw.py).
    def _function_arn(self, name: str) -> str:
        for fn in self.functions.values():
            if name in (fn.function_name, fn.arn):
                return fn.arn
        return name

    def _create_Lambda_Version(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return f"{self._function_arn(p['FunctionName'])}:1", {"Version": "1"}

    def _create_Lambda_Alias(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return f"{self._function_arn(p['FunctionName'])}:{p['Name']}", {}

    def _create_Lambda_EventSourceMapping(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        # Not created in moto: moto would deliver synchronously inside SendMessage / the write.
        mapping_id = str(uuid.uuid4())
        self._mappings[logical_id] = {**p, "UUID": mapping_id}
        return mapping_id, {"Id": mapping_id}

    def _create_StepFunctions_StateMachine(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        if "DefinitionString" in p:
            definition = p["DefinitionString"]
        elif "Definition" in p:
            definition = json.dumps(p["Definition"])
        else:
            raise ValueError(f"{logical_id}: DefinitionS3Location is not supported locally")
        for key, value in (p.get("DefinitionSubstitutions") or {}).items():
            definition = definition.replace("${" + key + "}", str(value))
        name = p.get("StateMachineName") or self._physical_name(logical_id, 80)
        arn = self._clients("stepfunctions").create_state_machine(
            name=name, definition=definition, roleArn=p["RoleArn"],
            type=p.get("StateMachineType", "STANDARD"))["stateMachineArn"]
        return arn, {"Arn": arn, "Name": name}

    def _create_SNS_Topic(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        name = p.get("TopicName") or self._physical_name(logical_id, 256)
        arn = self._clients("sns").create_topic(Name=name)["TopicArn"]   # encryption: not emulated
        return arn, {"TopicArn": arn, "TopicName": name}

    def _create_SNS_Subscription(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        # moto delivers a Lambda subscription itself, through the in-process runner (runtime.py),
        # synchronously inside Publish where SNS would invoke asynchronously
        if p.get("Protocol") != "lambda":
            self.logger.debug("subscription %s (%s): recorded only", logical_id, p.get("Protocol"))
            return logical_id, {}
        arn = self._clients("sns").subscribe(TopicArn=p["TopicArn"], Protocol="lambda",
                                             Endpoint=p["Endpoint"])["SubscriptionArn"]
        return arn, {}

    def _create_SES_ConfigurationSet(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        name = p.get("Name") or self._physical_name(logical_id, 64)
        self._clients("sesv2").create_configuration_set(ConfigurationSetName=name)
        return name, {}

    def _create_SES_ConfigurationSetEventDestination(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        # moto publishes no events of its own: the inbox's bounce button publishes SES's event to this topic
        destination = p.get("EventDestination") or {}
        topic = (destination.get("SnsDestination") or {}).get("TopicARN")
        if topic:
            self.mail_feedback_topics[str(p.get("ConfigurationSetName"))] = topic
        return logical_id, {}

    def _create_ApiGateway_RestApi(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        # only the id exists locally: the routes are served by the API Gateway stand-in
        return uuid.uuid4().hex[:10], {"RootResourceId": uuid.uuid4().hex[:10]}

    def _create_Cognito_UserPool(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        # Not emulated: the local stack names customers by X-Customer-Id (DeploymentKind=local).
        # Only the identifiers exist, for the authorizer the template puts in front of the API.
        pool_id = f"{self.region}_{uuid.uuid4().hex[:9]}"
        arn = f"arn:aws:cognito-idp:{self.region}:{ACCOUNT_ID}:userpool/{pool_id}"
        provider = f"cognito-idp.{self.region}.amazonaws.com/{pool_id}"
        return pool_id, {"Arn": arn, "ProviderName": provider, "ProviderURL": f"https://{provider}"}

    def _create_ApiGateway_Stage(self, logical_id: str, p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return p.get("StageName", "Prod"), {}

    # -- functions, environment, secrets ----------------------------------------------------------
    def _configure_functions(self) -> None:
        values: dict[str, set[str]] = {}
        for fn in self.functions.values():
            for key, value in fn.environment.items():
                values.setdefault(key, set()).add(value)
        for key, found in sorted(values.items()):
            if len(found) == 1:
                self._setenv(key, next(iter(found)))
            else:
                self.logger.debug("%s differs between functions: set while each handler is imported", key)
        for fn in self.functions.values():
            fn.import_environment = {k: v for k, v in fn.environment.items() if len(values[k]) > 1}
        runtime.register_functions(list(self.functions.values()))
        if self.lambda_workers:
            from .workers import DEFAULT_CONCURRENCY, WorkerPool

            # the stack's endpoint, region and credentials, not the union of the functions' variables:
            # each worker gets its own function's, so a variable the template forgot is missing as on AWS
            environ = {k: v for k, v in os.environ.items() if k not in values}
            default = self.default_concurrency or DEFAULT_CONCURRENCY
            for fn in self.functions.values():
                limit = self.concurrency_overrides.get(fn.logical_id) or fn.reserved_concurrency or default
                if fn.reserved_concurrency is not None:
                    limit = min(limit, fn.reserved_concurrency)
                fn.pool = WorkerPool(fn, limit, environ, list(self._added_sys_path) + [str(self.repo_root)],
                                     on_answer=_record_worker_answer, quiet=not self.worker_output)

    def _create_secrets(self) -> None:
        wanted: dict[str, Any]
        if self._secrets_override is not None:
            wanted = dict(self._secrets_override)
        else:
            wanted = {self.parameters[parameter]: value for parameter, value in LOCAL_SECRETS.items()
                      if parameter in self.parameters}
        if not wanted:
            return
        sm = self._clients("secretsmanager")
        for name, value in wanted.items():
            text = value if isinstance(value, str) else json.dumps(value)
            self.secrets[name] = sm.create_secret(Name=name, SecretString=text)["ARN"]

    def _verify_mail_sender(self) -> None:
        """The sender as a verified SES identity, as an operator verifies it before deploying
        (docs/deploy.md): the emulator refuses mail from any other."""
        sender = self.parameters.get("NotificationsSender")
        if sender:
            self.boto3_client("sesv2").create_email_identity(EmailIdentity=sender)

    def _local_inbox(self) -> mail.LocalInbox:
        def publish(event: dict[str, Any]) -> None:
            topics = list(self.mail_feedback_topics.values())
            if not topics:
                raise RuntimeError("the template sends no SES events to a topic")
            self.boto3_client("sns").publish(TopicArn=topics[0], Message=json.dumps(event))

        configuration_set = next(iter(self.mail_feedback_topics), "")
        return mail.LocalInbox(lambda: mail.sent_messages(ACCOUNT_ID, self.region), publish,
                               str(self.parameters.get("NotificationsSender") or ""), configuration_set, ACCOUNT_ID)

    def _seed_organizers(self) -> None:
        """The local organizers, on a stack whose key-hash secret is the local one (a test that
        brings its own secrets brings its own organizers too)."""
        if self._secrets_override is not None or "OrganizerKeyHashSecretName" not in self.parameters \
                or "BookingsTable" not in self.resources:
            return
        from devstack import organizers

        organizers.seed(self.resources["BookingsTable"], self.boto3_client("dynamodb"))

    def _start_pollers(self) -> None:
        for logical_id, mapping in self._mappings.items():
            fn = self._function_for(mapping.get("FunctionName", ""))
            if fn is None:
                self.logger.warning("event source mapping %s: unknown function %s", logical_id,
                                    mapping.get("FunctionName"))
                continue
            source = mapping.get("EventSourceArn", "")
            common = {"uuid_": mapping["UUID"], "function": fn, "region": self.region,
                      "mapping": mapping, "poll_interval": self.poll_interval}
            if source.startswith("arn:aws:sqs:"):
                queue_name = source.rsplit(":", 1)[-1]
                sqs = self.boto3_client("sqs")
                url = sqs.get_queue_url(QueueName=queue_name)["QueueUrl"]
                # as many batches at once as the function has environments (one at a time in-process)
                batches = fn.pool.concurrency if fn.pool is not None else 1
                poller: _Poller = SqsPoller(queue_url=url, queue_arn=source, client=sqs, max_batches=batches,
                                            **common)
            elif source.startswith("arn:aws:dynamodb:") and "/stream/" in source:
                poller = DynamoDbStreamPoller(stream_arn=source, streams_client=self.boto3_client(
                    "dynamodbstreams"), sqs_client=self.boto3_client("sqs"), **common)
            else:
                self.logger.warning("event source mapping %s: source %s not emulated", logical_id, source)
                continue
            self.pollers[logical_id] = poller
            poller.start()
        for logical_id, schedule in self._schedules.items():
            fn = self._function_for(schedule["target"])
            interval = rate_seconds(schedule["expression"])
            if fn is None or interval is None:
                self.logger.warning("schedule %s (%s) not emulated", logical_id, schedule["expression"])
                continue
            self.pollers[logical_id] = ScheduleInvoker(
                rule_arn=schedule["rule_arn"], interval_seconds=interval, uuid_=logical_id, function=fn,
                region=self.region, mapping={}, poll_interval=self.poll_interval)
            self.pollers[logical_id].start()
        for poller in self.pollers.values():
            if isinstance(poller, DynamoDbStreamPoller):
                poller.wait_ready(10)

    def _function_for(self, reference: str) -> LocalFunction | None:
        for fn in self.functions.values():
            if reference in (fn.function_name, fn.arn, fn.logical_id) or reference.endswith(
                    ":function:" + fn.function_name):
                return fn
        return None
