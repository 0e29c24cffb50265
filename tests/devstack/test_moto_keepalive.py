"""The local stack's moto server keeps a client's connection open between requests (issue 47,
fifth pass): each AWS call a function made was a new connection before (docs/testing.md)."""
from __future__ import annotations

import http.client
import json
import socketserver

from devstack.aws.stack import _QuietMotoServer

HEADERS = {"X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0",
           "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/eu-central-1/dynamodb/aws4_request, "
                            "SignedHeaders=host, Signature=0"}


def test_requests_with_bodies_share_one_connection_and_each_gets_its_own_answer(monkeypatch):
    accepted = []
    original = socketserver.ThreadingMixIn.process_request
    monkeypatch.setattr(socketserver.ThreadingMixIn, "process_request",
                        lambda self, request, address: (accepted.append(address), original(self, request, address)))
    server = _QuietMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server._server.server_port, timeout=10)
        answers = []
        for limit in (1, 2, 3):
            connection.request("POST", "/", body=json.dumps({"Limit": limit}), headers=HEADERS)
            answer = connection.getresponse()
            answers.append((answer.status, answer.getheader("Connection"), json.loads(answer.read())))
        connection.close()
    finally:
        server.stop()
    assert answers == [(200, None, {"TableNames": []})] * 3
    assert len(accepted) == 1   # one connection carried the three requests
