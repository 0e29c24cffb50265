"""`python -m devstack.admin`: the operators' tool (holdfast.tools.cli, the same commands and options)
aimed at the local stack `make run` starts: its API, its organizer key and its AWS endpoint by
default, and its clients made by the localstack_client helper (dummy credentials, so a developer's
own keys never go to the emulator). An endpoint that is not on loopback still goes to boto3 as
holdfast.tools.cli makes it. HOLDFAST_API_URL, HOLDFAST_ORGANIZER_KEY and AWS_ENDPOINT_URL still win.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# run from the repository like `make run` (the deployed package lives in the layer's folder)
_LAYER = str(Path(__file__).resolve().parents[1] / "layers" / "holdfast")
if _LAYER not in sys.path:
    sys.path.insert(0, _LAYER)

from holdfast.tools import cli# noqa: E402

from devstack.aws.clients import edge_client  # noqa: E402
from devstack.run import ORGANIZER_KEY

#: where `make run` puts the API and the AWS endpoint (devstack/run.py's default ports)
LOCAL_DEFAULTS = {
    "api": "http://127.0.0.1:3000",
    "key": ORGANIZER_KEY,
    "endpoint": "http://127.0.0.1:4566",
}


def local_client(service: str, endpoint: str) -> Any:
    if endpoint and urlsplit(endpoint).hostname in ("127.0.0.1", "localhost", "::1"):
        return edge_client(endpoint, service, os.environ.get("AWS_DEFAULT_REGION", "eu-central-1"))
    return cli.aws_client(service, endpoint)


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, defaults=LOCAL_DEFAULTS, clients=local_client)


if __name__ == "__main__":
    sys.exit(main())
