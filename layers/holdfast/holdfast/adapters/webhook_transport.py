"""The network as a webhook attempt uses it (the ``WebhookTransport`` port) and the queue of
attempts (``WebhookAttempts``).

An attempt resolves the endpoint's name itself and connects to the address the service checked,
never to the name again: a name that answers a public address to the check and an inner one to
the connection (DNS rebinding) cannot steer the request. For https the TLS handshake still
names the host (SNI) and the certificate is verified against it. Redirects are not followed."""
from __future__ import annotations

import json
import socket
from typing import Any

import boto3
import urllib3

#: The most of an answer read (its status is what counts).
MAX_ANSWER_BYTES = 64 * 1024


class HttpTransport:
    """``ca_file``: a PEM file of the certificates to trust instead of the system's store (a local
    receiver's self-signed one; config ``WEBHOOK_CA_FILE``, refused unless the stack is local).
    Certificates are verified, and the host name checked, either way."""

    def __init__(self, ca_file: str | None = None) -> None:
        self.ca_file = ca_file

    def resolve(self, host: str, port: int) -> list[str]:
        try:
            answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror:
            return []
        return list(dict.fromkeys(str(answer[4][0]) for answer in answers))

    def post(self, scheme: str, host: str, port: int, path: str, address: str, headers: dict[str, str],
             body: bytes, timeout: float) -> int:
        limits = urllib3.Timeout(connect=timeout, read=timeout)
        if scheme == "https":
            pool: Any = urllib3.HTTPSConnectionPool(address, port, timeout=limits, retries=False, maxsize=1,
                                                    server_hostname=host, assert_hostname=host,
                                                    cert_reqs="CERT_REQUIRED",   # the system's CA store unless
                                                    ca_certs=self.ca_file)       # a local stack names one
        else:
            pool = urllib3.HTTPConnectionPool(address, port, timeout=limits, retries=False, maxsize=1)
        default_port = 443 if scheme == "https" else 80
        try:
            answer = pool.urlopen("POST", path, body=body, redirect=False, preload_content=False, assert_same_host=False,
                                  headers={**headers, "Host": host if port == default_port else f"{host}:{port}"})
            try:
                answer.read(MAX_ANSWER_BYTES)
            finally:
                answer.release_conn()
            return int(answer.status)
        except urllib3.exceptions.HTTPError as exc:
            raise OSError(type(exc).__name__) from None
        finally:
            pool.close()


class WebhookAttemptsQueue:
    """SQS: a message is one attempt; SQS delays a message at most 15 minutes, so a later attempt
    carries its moment (``due``) and is sent on again until then (services/webhooks.py)."""

    MAX_DELAY = 900

    def __init__(self, queue_url: str, client: Any | None = None) -> None:
        self.url = queue_url
        self.client = client or boto3.client("sqs")

    def send(self, message: dict[str, Any], delay: int = 0) -> None:
        self.client.send_message(QueueUrl=self.url, MessageBody=json.dumps(message, separators=(",", ":")),
                                 DelaySeconds=max(0, min(int(delay), self.MAX_DELAY)))
