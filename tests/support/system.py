"""The whole local system on loopback for the HTTP suites: the payment sandbox, the embedded AWS
stack deployed from template.yaml with its webhooks aimed at the API, and a client for it."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from devstack.aws import EmbeddedStack
from devstack.aws.timecontrol import link_payment_sandbox
from devstack.paysandbox import SandboxControl, SandboxServer
from tests.support.api import BookingApi
from tests.support.handlers import REPO


@contextmanager
def local_system(**template_parameters: str) -> Iterator[dict[str, Any]]:
    """Start both on OS-chosen ports; the template's parameters (beyond the sandbox's URL) shorten
    timings through configuration only. Both run on the stack's clock: `stack.advance_clock(s)`
    moves it, `stack.wait_idle()` waits until nothing runs. Only one stack may run in a process at
    a time."""
    from holdfast import wiring

    with SandboxServer(host="127.0.0.1", port=0) as sandbox:
        stack = EmbeddedStack(str(REPO), aws_port=0, api_port=0,
                           parameters={"ProviderApiUrl": sandbox.base_url,
                                       "CaptchaVerifyUrl": f"{sandbox.origin}/smartcaptcha/validate",
                                       "CaptchaWidgetOrigin": sandbox.origin,
                                       **template_parameters})
        stack.start()
        try:
            link_payment_sandbox(stack, sandbox)
            wiring.reset()
            from holdfast.adapters.aws import clear_secret_cache
            clear_secret_cache()
            control = SandboxControl(sandbox.control_url)
            control.set_webhooks([stack.api_url + "/webhooks/payments"])
            yield {"stack": stack, "sandbox": sandbox, "control": control, "api": BookingApi(stack.api_url)}
        finally:
            stack.stop()
            wiring.reset()
