"""make invoke: run one function with one event and print its response, the way
`sam local invoke -e EVENT FUNCTION` does with Docker, here without it.

    make invoke FUNCTION=BookingsApiFunction EVENT=events/create_booking.json
    python -m devstack.invoke BookingsApiFunction events/create_booking.json [--endpoint URL]

The call goes through the Lambda API (`Invoke`) of the local stack, so the function runs as every
other invocation does there (its environment, its in-process runtime, Lambda's error shape):

* a running `make run`: its emulator at --endpoint (default $AWS_ENDPOINT_URL, else
  http://127.0.0.1:4566), where the function is named <stack>-<logical id>;
* none answering there: an embedded stack (and payment sandbox) started on free ports for this
  one invocation, then stopped.

The response payload is printed as JSON; the exit status is 1 when the function raised (Lambda's
`FunctionError`), 2 when the function or the event file does not exist.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from devstack import sample_events

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ENDPOINT = "http://127.0.0.1:4566"


def function_name(function: str, stack: str) -> str:
    """A logical id (BookingsApiFunction) becomes the local stack's physical name."""
    return function if function.startswith(f"{stack}-") else f"{stack}-{function}"[:64]


def lambda_client(endpoint: str, region: str) -> Any:
    from botocore.config import Config

    from devstack.aws.clients import edge_client

    return edge_client(endpoint, "lambda", region,
                       config=Config(connect_timeout=2, read_timeout=120, retries={"max_attempts": 1}))


def answers(client: Any, name: str) -> bool:
    """Whether a stack is up at the client's endpoint with this function deployed."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        client.get_function(FunctionName=name)
        return True
    except (BotoCoreError, ClientError):
        return False


def invoke(client: Any, name: str, event: Any) -> tuple[Any, str | None]:
    """(the response payload, Lambda's FunctionError or None)."""
    answer = client.invoke(FunctionName=name, Payload=json.dumps(event).encode())
    raw = answer["Payload"].read()
    try:
        payload = json.loads(raw) if raw else None
    except ValueError:
        payload = raw.decode(errors="replace")
    return payload, answer.get("FunctionError")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make invoke", description=__doc__.split("\n\n")[0])
    parser.add_argument("function", help="logical id in template.yaml (or the deployed name)")
    parser.add_argument("event", help="JSON event file, e.g. events/create_booking.json")
    parser.add_argument("--endpoint", default=os.environ.get("AWS_ENDPOINT_URL") or DEFAULT_ENDPOINT)
    parser.add_argument("--stack", default="holdfast", help="the local stack's name (function name prefix)")
    parser.add_argument("--region", default=os.environ.get("AWS_DEFAULT_REGION", "eu-central-1"))
    args = parser.parse_args(argv)

    path = Path(args.event)
    if not path.is_file():
        print(f"no event file {path}", file=sys.stderr)
        return 2
    event = sample_events.load(path)   # its dates as of today, not the day it was written for
    name = function_name(args.function, args.stack)
    with ExitStack() as cleanup:
        client = lambda_client(args.endpoint, args.region)
        if not answers(client, name):
            print(f"no stack with {name} at {args.endpoint}: starting one for this invocation", file=sys.stderr)
            client = cleanup.enter_context(_embedded_stack(args.stack))
            if not answers(client, name):
                print(f"template.yaml has no function {args.function}", file=sys.stderr)
                return 2
        payload, error = invoke(client, name, event)
    print(json.dumps(payload, indent=2, ensure_ascii=False) if not isinstance(payload, str) else payload)
    if error:
        print(f"{name} raised ({error})", file=sys.stderr)
        return 1
    return 0


class _embedded_stack:  # noqa: N801 - a context manager used like a function
    def __init__(self, stack_name: str) -> None:
        self.stack_name = stack_name
        self._exit = ExitStack()

    def __enter__(self) -> Any:
        import logging

        from devstack.aws import EmbeddedStack
        from devstack.paysandbox import SandboxServer

        logging.basicConfig(level=logging.WARNING)
        sandbox = self._exit.enter_context(SandboxServer(host="127.0.0.1", port=0))
        stack = EmbeddedStack(str(REPO), aws_port=0, api_port=0, stack_name=self.stack_name,
                           parameters={"ProviderApiUrl": sandbox.base_url,
                                       "CaptchaVerifyUrl": f"{sandbox.origin}/smartcaptcha/validate",
                                       "CaptchaWidgetOrigin": sandbox.origin})
        stack.start()
        self._exit.callback(stack.stop)
        return stack.boto3_client("lambda")

    def __exit__(self, *exc: Any) -> None:
        self._exit.close()


if __name__ == "__main__":
    sys.exit(main())
