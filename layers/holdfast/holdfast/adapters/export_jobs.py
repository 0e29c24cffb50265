"""Export jobs (``POST /organizers/me/exports``, docs/api.md "Exports as a job"): the job items on
the shared table, the queue that runs them and the bucket their files are written to.

  ORGANIZER#<organizer_id> / EXPORT#<export_id>   one job: what was asked (export, filters), by
                                                  which key, its status and, once written, the
                                                  file's key in the bucket and its row count

The job item is also on the gsi1 index under ``EXPORTJOBS#<organizer_id>`` / ``<created_at>#<export_id>``
(attributes of the item itself, set when it is stored), which lists an organizer's jobs newest
first (``GET /organizers/me/exports``); a page is one index query and one batch read.

A job item expires (``ttl``) some days after its file does; the file itself is removed by the
bucket's lifecycle rule, whose days are the same template parameter (ExportFileRetentionDays).
"""
from __future__ import annotations

import json
from typing import Any

import boto3
from botocore.exceptions import ClientError

from .codec import Table, _attrs, _code, _plain

_KEYS = ("pk", "sk", "ttl", "gsi1pk", "gsi1sk")


def _listed(organizer_id: str) -> str:
    return f"EXPORTJOBS#{organizer_id}"


class ExportJobItems(Table):
    def add_job(self, organizer_id: str, job: dict[str, Any], ttl: int) -> bool:
        """Store a new job; False when one of that id exists (a repeated Idempotency-Key)."""
        return self._put_if_new({"pk": f"ORGANIZER#{organizer_id}", "sk": f"EXPORT#{job['export_id']}", "ttl": ttl,
                                 "gsi1pk": _listed(organizer_id), "gsi1sk": f"{job['created_at']}#{job['export_id']}",
                                 **job})

    def get_job(self, organizer_id: str, export_id: str) -> dict[str, Any] | None:
        item = self._get(f"ORGANIZER#{organizer_id}", f"EXPORT#{export_id}")
        if not item:
            return None
        return _job(item)

    def job_page(self, organizer_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` jobs, newest first, after the index position ``after``; and the position
        to read on from (None at the end). One index query (keys only) and one batch read."""
        request: dict[str, Any] = {
            "TableName": self.table, "IndexName": "gsi1", "KeyConditionExpression": "gsi1pk = :pk",
            "ExpressionAttributeValues": _attrs({":pk": _listed(organizer_id)}), "ScanIndexForward": False,
            "Limit": limit}
        if after:
            request["ExclusiveStartKey"] = _attrs({"gsi1pk": _listed(organizer_id), "gsi1sk": after,
                                                   "pk": f"ORGANIZER#{organizer_id}",
                                                   "sk": f"EXPORT#{after.rpartition('#')[2]}"})
        answer = self.client.query(**request)
        keys = [_plain(item) for item in answer.get("Items", [])]
        found: dict[str, dict[str, Any]] = {}
        request_items = {self.table: {"Keys": [_attrs({"pk": key["pk"], "sk": key["sk"]}) for key in keys],
                                      "ConsistentRead": True}} if keys else {}
        while request_items:
            read = self.client.batch_get_item(RequestItems=request_items)
            for item in read.get("Responses", {}).get(self.table, []):
                plain = _plain(item)
                found[plain["sk"]] = _job(plain)
            request_items = read.get("UnprocessedKeys") or {}
        jobs = [found[key["sk"]] for key in keys if key["sk"] in found]   # one gone meanwhile is left out
        last = answer.get("LastEvaluatedKey")
        return jobs, (_plain(last)["gsi1sk"] if last else None)

    def finish_job(self, organizer_id: str, export_id: str, changes: dict[str, Any]) -> bool:
        """Set the outcome of a job still running (False when it had one already: a repeated message)."""
        return self._change_running(organizer_id, export_id, changes)

    def note_running(self, organizer_id: str, export_id: str, facts: dict[str, Any]) -> bool:
        """Note facts on a job still running: the attempt that began (``attempt``,
        ``attempt_ends_at``, ``last_attempt``) or its message queued again (``queued_at``); False
        when the job had an outcome already."""
        return self._change_running(organizer_id, export_id, facts)

    def _change_running(self, organizer_id: str, export_id: str, changes: dict[str, Any]) -> bool:
        names = {f"#f{i}": name for i, name in enumerate(changes)}
        values = {f":v{i}": value for i, value in enumerate(changes.values())}
        try:
            self.client.update_item(
                TableName=self.table, Key=_attrs({"pk": f"ORGANIZER#{organizer_id}", "sk": f"EXPORT#{export_id}"}),
                UpdateExpression="SET " + ", ".join(f"#f{i} = :v{i}" for i in range(len(changes))),
                ConditionExpression="attribute_exists(pk) AND #status = :running",
                ExpressionAttributeNames={**names, "#status": "status"},
                ExpressionAttributeValues=_attrs({**values, ":running": "running"}))
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise
            return False
        return True


def _job(item: dict[str, Any]) -> dict[str, Any]:
    job = {key: value for key, value in item.items() if key not in _KEYS}
    for number in ("rows", "attempt"):
        if job.get(number) is not None:
            job[number] = int(job[number])
    return job


class ExportJobsQueue:
    """SQS: a message names one job; the export job function runs it."""

    def __init__(self, queue_url: str, client: Any | None = None) -> None:
        self.url = queue_url
        self.client = client or boto3.client("sqs")

    def send(self, message: dict[str, Any]) -> None:
        self.client.send_message(QueueUrl=self.url, MessageBody=json.dumps(message, separators=(",", ":")))


class ExportBucket:
    """S3: each job's CSV file, private; a download is a presigned GET that expires."""

    def __init__(self, bucket: str, client: Any | None = None) -> None:
        self.bucket = bucket
        self.client = client or boto3.client("s3")

    def put(self, key: str, body: bytes, filename: str) -> None:
        self.client.put_object(Bucket=self.bucket, Key=key, Body=body, ContentType="text/csv; charset=utf-8",
                               ContentDisposition=f'attachment; filename="{filename}"')

    def link(self, key: str, seconds: int) -> str:
        return self.client.generate_presigned_url("get_object", Params={"Bucket": self.bucket, "Key": key},
                                                  ExpiresIn=seconds)
