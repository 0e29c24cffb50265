"""holdfast/ports.py and the products' own ports modules: the core's load nothing heavy, and the
adapters (and the test fakes that stand for them) implement every member of the Protocols the
services are written against: the table's store through its core stores and the products' parts."""
from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest
from botocore.exceptions import ClientError

from holdfast import ports
from holdfast.products.appointments import ports as appointment_ports
from holdfast.products.events import ports as events_ports
from holdfast.products.parking import ports as parking_ports
from holdfast.adapters import aws
from holdfast.adapters.dynamo import BookingStore
from holdfast.adapters.mail_policy_store import MailPolicyStore
from holdfast.products.parking.adapters.gate_sync_store import GateSyncStore
from holdfast.adapters.audit_store import AuditStore
from holdfast.adapters.captcha import SmartCaptchaVerifier
from holdfast.adapters.export_jobs import ExportBucket, ExportJobItems, ExportJobsQueue
from holdfast.adapters.webhook_transport import HttpTransport, WebhookAttemptsQueue
from holdfast.adapters.webhooks_store import WebhookItems
from holdfast.adapters.organizers_store import OrganizerStore
from holdfast.adapters.provider import YooKassaProvider
from holdfast.adapters.surge import SurgeStore
from holdfast.clock import system_clock
from holdfast.domain.admission import RateRule
from holdfast.services.admission import RateLimiter
from tests.support.fake_mail import FakeMailPolicy
from tests.support.fake_provider import FakeProvider
from tests.support.handlers import REPO

#: Packages a function's cold start must not pay for because it imported the ports.
HEAVY = ("boto3", "botocore", "pydantic", "requests", "yookassa", "aws_lambda_powertools", "aws_xray_sdk",
         "holdfast.adapters", "holdfast.services", "holdfast.wiring")


def test_importing_the_ports_loads_no_sdk_no_pydantic_and_no_adapter():
    probe = ("import json, sys; import holdfast.ports; "
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('holdfast', *%r)))))" % (HEAVY,))
    answer = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(REPO / "layers" / "holdfast"), "PATH": ""})
    assert json.loads(answer.stdout) == ["holdfast", "holdfast.ports"]


PORT_MODULES = (ports, parking_ports, appointment_ports, events_ports)


def _protocols() -> dict[str, type]:
    return {name: value for module in PORT_MODULES for name, value in vars(module).items()
            if isinstance(value, type) and getattr(value, "_is_protocol", False) and value.__module__ == module.__name__}


def _members(protocol: type) -> set[str]:
    return set(protocol.__protocol_attrs__) - {"__call__"}


#: Which concrete class wiring hands in for each port.
IMPLEMENTED_BY: dict[str, tuple[type, ...]] = {
    "SurgeQueue": (SurgeStore,), "RateLimits": (SurgeStore,), "SequenceLedger": (GateSyncStore,),
    "OrganizerDirectory": (OrganizerStore,), "FiscalReads": (OrganizerStore,),
    "AuditLog": (AuditStore,),
    "WebhookStore": (WebhookItems,), "WebhookAttempts": (WebhookAttemptsQueue,), "WebhookTransport": (HttpTransport,),
    "ExportJobStore": (ExportJobItems,), "ExportJobQueue": (ExportJobsQueue,), "ExportFiles": (ExportBucket,),
    "PaymentProvider": (YooKassaProvider, FakeProvider), "HoldExpiryScheduler": (aws.StepFunctionsHoldExpiryScheduler,),
    "ReconciliationStarter": (aws.StepFunctionsReconciliationStarter, aws.ReconciliationBuckets),
    "CancellationJobs": (aws.StepFunctionsCancellationJobs,), "PaymentEventsQueue": (aws.SqsPaymentEventsQueue,),
    "EmailSender": (aws.SesEmailSender,), "ChallengeVerifier": (SmartCaptchaVerifier,), "Clock": (), "MailPolicy": (MailPolicyStore, FakeMailPolicy),
}


def test_every_port_has_an_implementation_listed_or_is_storage():
    assert set(IMPLEMENTED_BY) <= set(_protocols())


@pytest.mark.parametrize("name", sorted(_protocols()))
def test_the_concrete_classes_implement_every_member_with_the_same_parameters(name):
    protocol = _protocols()[name]
    # the table's store as wiring builds it: a product's members come from its store part
    for concrete in IMPLEMENTED_BY.get(name, (BookingStore("bookings", client=object()),)):
        for member in sorted(_members(protocol)):
            assert hasattr(concrete, member), f"{concrete!r} lacks {name}.{member}"
            wanted = [p for p in inspect.signature(getattr(protocol, member)).parameters if p != "self"]
            found = [p for p in inspect.signature(getattr(concrete, member)).parameters if p != "self"]
            assert found == wanted, f"{concrete!r}.{member}{found} is not {name}.{member}{wanted}"


def test_the_system_clock_is_a_clock_of_aware_datetimes():
    clock: ports.Clock = system_clock
    assert clock().tzinfo is not None


class _ThrottledClient:
    """A DynamoDB client whose writes fail with ``code``."""

    def __init__(self, code: str) -> None:
        self.code = code

    def update_item(self, **_: object) -> None:
        raise ClientError({"Error": {"Code": self.code, "Message": "injected"}}, "UpdateItem")


def test_a_throttled_rate_limit_store_is_a_transient_outcome_and_the_request_goes_through():
    surge = SurgeStore("bookings", _ThrottledClient("ProvisionedThroughputExceededException"))
    with pytest.raises(ports.TransientStoreError):
        surge.rate_take("booking", "ann", 1_000, 100, 1_000)
    RateLimiter(surge, system_clock, {"booking": RateRule(per_minute=1, burst=1)}).take("booking", "ann")


def test_any_other_store_failure_of_the_rate_limit_still_fails_the_request():
    surge = SurgeStore("bookings", _ThrottledClient("ValidationException"))
    with pytest.raises(ClientError):
        RateLimiter(surge, system_clock, {"booking": RateRule(per_minute=1, burst=1)}).take("booking", "ann")
