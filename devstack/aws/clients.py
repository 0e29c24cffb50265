"""Clients for the local stack, made the way LocalStack's users make them: from a
`localstack_client.session.Session()` aimed at the stack's edge endpoint (one URL for every service).

Every dev and test tool that talks to a running local stack (the stack's own deployment, the tests'
fixtures, `make invoke`) takes its clients from here rather than passing `endpoint_url=` itself.
Deployed code never imports this: functions find the emulator through `AWS_ENDPOINT_URL`, which is
configuration.
"""
from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlsplit

from localstack_client.session import Session

#: Dummy credentials: the emulator accepts anything, and a developer's real keys must never be sent.
LOCAL_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
                     "aws_session_token": "testing"}

# localstack_client builds clients from boto3's shared default session, and creating clients from one
# boto3 session in several threads at once is not safe (the stack's pollers and tests do that).
_CLIENT_LOCK = threading.Lock()


class EdgeSession(Session):
    """A localstack_client session bound to one edge endpoint.

    The library prefers `$AWS_ENDPOINT_URL` over the host it is given. Tests run several embedded
    stacks in one process, each on its own OS-chosen port, and the variable names only the active
    one; so the endpoint this session was made for is pinned for every service it knows.
    """

    def __init__(self, endpoint: str, region: str, overrides: dict[str, str] | None = None) -> None:
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.port:
            raise ValueError(f"an edge endpoint is scheme://host:port, not {endpoint!r}")
        super().__init__(region_name=region, localstack_host=parts.netloc, **LOCAL_CREDENTIALS)
        self.endpoint = f"{parts.scheme}://{parts.netloc}"
        self._service_endpoint_mapping = dict.fromkeys(self._service_endpoint_mapping, self.endpoint)
        self._service_endpoint_mapping.update(overrides or {})  # e.g. DynamoDB at DynamoDB Local

    def client(self, service_name: str, **kwargs: Any) -> Any:
        with _CLIENT_LOCK:
            return super().client(service_name, **kwargs)

    def resource(self, service_name: str, **kwargs: Any) -> Any:
        with _CLIENT_LOCK:
            return super().resource(service_name, **kwargs)


def edge_client(endpoint: str, service: str, region: str, **kwargs: Any) -> Any:
    """A boto3 client for `service` at the local stack whose edge endpoint is `endpoint`."""
    return EdgeSession(endpoint, region).client(service, **kwargs)
