"""Event-source pollers that behave like Lambda's: asynchronous, batching, filtering, partial batch
failures, retries. moto's own delivery (inside SendMessage / the table write) is never used: the
mappings are not created in moto at all.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import logging
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from .runtime import LocalFunction, run_function

LOG = logging.getLogger("devstack.aws.pollers")


# --------------------------------------------------------------------------------------------
# Event filtering (the subset of EventBridge patterns Lambda accepts in FilterCriteria)
# --------------------------------------------------------------------------------------------


def _match_rule(rule: Any, value: Any, present: bool) -> bool:
    if isinstance(rule, dict):
        (op, arg), = rule.items()
        if op == "exists":
            return present == bool(arg)
        if not present:
            return False
        if op == "prefix":
            return isinstance(value, str) and value.startswith(arg)
        if op == "suffix":
            return isinstance(value, str) and value.endswith(arg)
        if op == "equals-ignore-case":
            return isinstance(value, str) and value.lower() == str(arg).lower()
        if op == "anything-but":
            if isinstance(arg, dict):
                return not _match_rule(arg, value, present)
            options = arg if isinstance(arg, list) else [arg]
            return value not in options
        if op == "numeric":
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                return False
            checks = {"<": float.__lt__, "<=": float.__le__, "=": float.__eq__,
                      ">": float.__gt__, ">=": float.__ge__}
            for i in range(0, len(arg), 2):
                if not checks[arg[i]](float(value), float(arg[i + 1])):
                    return False
            return True
        raise ValueError(f"unsupported filter operator: {op}")
    return present and value == rule


def matches_pattern(pattern: dict[str, Any], event: Any) -> bool:
    """True when `event` matches `pattern` (all keys must match; a list means any of its rules)."""
    if not isinstance(event, dict):
        return False
    for key, rule in pattern.items():
        present = key in event
        value = event.get(key)
        if isinstance(rule, dict):
            if not present or not isinstance(value, dict):
                return False
            if not matches_pattern(rule, value):
                return False
            continue
        if not isinstance(rule, list):
            raise ValueError(f"filter values must be lists: {key}")
        values = value if isinstance(value, list) else [value]
        if not any(_match_rule(r, v, present) for r in rule for v in values):
            return False
    return True


def record_passes(filters: list[dict[str, Any]], record: dict[str, Any]) -> bool:
    if not filters:
        return True
    return any(matches_pattern(f, record) for f in filters)


def parse_filters(mapping: dict[str, Any]) -> list[dict[str, Any]]:
    criteria = mapping.get("FilterCriteria") or {}
    return [json.loads(f["Pattern"]) for f in criteria.get("Filters", []) if f.get("Pattern")]


# --------------------------------------------------------------------------------------------
# Base poller
# --------------------------------------------------------------------------------------------


@dataclass
class PollerStats:
    invocations: int = 0
    records: int = 0
    failures: int = 0
    filtered_out: int = 0
    sent_to_destination: int = 0


class _Poller:
    kind = "poller"

    def __init__(self, *, uuid_: str, function: LocalFunction, client: Any, region: str,
                 mapping: dict[str, Any], poll_interval: float = 0.1):
        self.uuid = uuid_
        self.function = function
        self.client = client
        self.region = region
        self.mapping = mapping
        self.poll_interval = poll_interval
        self.batch_size = int(mapping.get("BatchSize") or 10)
        self.report_failures = "ReportBatchItemFailures" in (mapping.get("FunctionResponseTypes") or [])
        self.filters = parse_filters(mapping)
        self.enabled = mapping.get("Enabled", True) not in (False, "false", "False")
        self.stats = PollerStats()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # for the stack's `wait_idle`: polls that found nothing, and polls under way
        self.empty_polls = 0
        self.polls_under_way = 0

    def start(self) -> None:
        if not self.enabled:
            return
        self._thread = threading.Thread(target=self._run, name=f"{self.kind}-{self.function.logical_id}",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            mark = self._mark()
            self.polls_under_way += 1
            try:
                busy = self.poll_once()
            except Exception:  # noqa: BLE001 - a poller never dies, like Lambda's
                if self._stop.is_set():
                    break
                LOG.exception("%s for %s failed; retrying", self.kind, self.function.function_name)
                busy = False
            finally:
                self.polls_under_way -= 1
            if not busy:
                self.empty_polls += 1
                self._idle(mark)

    def nudge(self) -> None:
        """Poll again now rather than after the idle wait (the stack's `wait_idle` asks)."""

    def busy(self) -> bool:
        """Work this poller has taken and not finished."""
        return self.polls_under_way > 0

    def _mark(self) -> Any:
        """Taken before a poll; an idle wait ends early on what came after it (SqsPoller)."""
        return None

    def _idle(self, mark: Any) -> None:
        self._stop.wait(self.poll_interval)

    def poll_once(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def _invoke(self, event: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        self.stats.invocations += 1
        return run_function(self.function, event)

    def _failed_ids(self, result: Any, error: Any, all_ids: list[str]) -> list[str]:
        """Identifiers to retry: all on an error, or those reported in batchItemFailures."""
        if error is not None:
            return list(all_ids)
        if not self.report_failures or not isinstance(result, dict):
            return []
        failures = result.get("batchItemFailures")
        if failures is None:
            return []
        if not isinstance(failures, list):
            return list(all_ids)
        failed = []
        for item in failures:
            ident = item.get("itemIdentifier") if isinstance(item, dict) else None
            if not ident or ident not in all_ids:
                # Lambda treats a malformed or unknown identifier as a failure of the whole batch
                return list(all_ids)
            failed.append(ident)
        return failed


# --------------------------------------------------------------------------------------------
# SQS
# --------------------------------------------------------------------------------------------


class _Wake:
    """A count of wake-ups and a condition to wait for the next one: taken before a receive, it
    makes the wait that follows an empty receive end on anything that came meanwhile."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._count = 0

    def __call__(self) -> None:
        with self._cond:
            self._count += 1
            self._cond.notify_all()

    def mark(self) -> int:
        return self._count

    def wait(self, since: int, timeout: float) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._count != since, timeout)


#: The pollers' wake-ups by queue name; moto's `Queue.add_message` calls them (`_hook_arrivals`).
_ARRIVALS: dict[str, set[_Wake]] = {}
_ARRIVALS_LOCK = threading.Lock()


def _hook_arrivals() -> None:
    """Every message put on a moto queue (SendMessage, an EventBridge or Step Functions target, a
    redrive) wakes the pollers of that queue."""
    from moto.sqs import models as sqs_models

    original = sqs_models.Queue.add_message
    if getattr(original, "_devstack_wakes", False):
        return

    def add_message(queue: Any, message: Any) -> None:
        original(queue, message)
        for wake in list(_ARRIVALS.get(queue.name, ())):
            wake()

    add_message._devstack_wakes = True  # type: ignore[attr-defined]
    sqs_models.Queue.add_message = add_message  # type: ignore[method-assign]


def _next_visible_in(queue_name: str) -> float | None:
    """Seconds until the first message of the queue that is delayed or in flight turns visible."""
    from moto.sqs import models as sqs_models

    now = sqs_models.unix_time_millis()
    soonest = None
    for account in list(sqs_models.sqs_backends.keys()):
        for backend in list(sqs_models.sqs_backends[account].values()):
            queue = backend.queues.get(queue_name)
            for message in list(getattr(queue, "_messages", ()) or ()):
                at = max(message.visible_at, message.delayed_until)
                if at > now and (soonest is None or at < soonest):
                    soonest = at
    return None if soonest is None else (soonest - now) / 1000.0


class SqsPoller(_Poller):
    """Reads the queue and hands batches to the function, up to ``max_batches`` at once.

    Lambda processes several batches of one SQS mapping at the same time (five at the start on a
    standard queue, one per active message group on a FIFO queue, at most the mapping's
    ``ScalingConfig.MaximumConcurrency`` and the function's concurrency). One thread receives;
    each received batch runs on a thread of its own while the next is read. FIFO order holds
    because the queue hands out no message of a group that has one in flight (moto does this as
    SQS does). ``max_batches=1`` is one batch after another.

    An idle poller does not ask the queue again every ``poll_interval``: like Lambda's long poll, it
    waits until a message arrives (moto tells it, `_hook_arrivals`), a batch of its own finishes (a
    FIFO group it held is free again), or the first delayed or in-flight message turns visible,
    and at most ``idle_seconds``. Ten empty receives a second per queue cost the stack process
    more CPU than a hold's own work when the stack is quiet (docs/performance.md)."""

    kind = "sqs-poller"

    def __init__(self, *, queue_url: str, queue_arn: str, max_batches: int = 1, idle_seconds: float = 1.0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.queue_url = queue_url
        self.queue_arn = queue_arn
        self.queue_name = queue_arn.rsplit(":", 1)[-1]
        self.idle_seconds = max(idle_seconds, self.poll_interval)
        self._wake = _Wake()
        _hook_arrivals()
        scaling = (self.mapping.get("ScalingConfig") or {}).get("MaximumConcurrency")
        self.max_batches = max(1, min(int(max_batches), int(scaling)) if scaling else int(max_batches))
        self._slots = threading.BoundedSemaphore(self.max_batches)
        self.in_flight_peak = 0
        self._in_flight = 0
        self._count_lock = threading.Lock()

    def start(self) -> None:
        if self.enabled:
            with _ARRIVALS_LOCK:
                _ARRIVALS.setdefault(self.queue_name, set()).add(self._wake)
        super().start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake()
        super().stop(timeout)
        with _ARRIVALS_LOCK:
            wakes = _ARRIVALS.get(self.queue_name)
            if wakes is not None:
                wakes.discard(self._wake)
                if not wakes:
                    del _ARRIVALS[self.queue_name]

    def _mark(self) -> int:
        return self._wake.mark()

    def nudge(self) -> None:
        self._wake()

    def busy(self) -> bool:
        return self.polls_under_way > 0 or self._in_flight > 0

    def _idle(self, mark: int) -> None:
        if self._stop.is_set():
            return
        visible_in = _next_visible_in(self.queue_name)
        timeout = self.idle_seconds if visible_in is None else min(self.idle_seconds, visible_in + 0.005)
        self._wake.wait(mark, timeout)

    def _run(self) -> None:
        if self.max_batches == 1:
            super()._run()
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(self.max_batches, thread_name_prefix=f"sqs-batch-{self.function.logical_id}") as pool:
            while not self._stop.is_set():
                if not self._slots.acquire(timeout=self.poll_interval):
                    continue
                mark = self._mark()
                self.polls_under_way += 1
                try:
                    messages = self._receive()
                except Exception:  # noqa: BLE001 - a poller never dies, like Lambda's
                    self.polls_under_way -= 1
                    self._slots.release()
                    if not self._stop.is_set():
                        LOG.exception("%s for %s failed; retrying", self.kind, self.function.function_name)
                        self._stop.wait(self.poll_interval)
                    continue
                if not messages:
                    self.polls_under_way -= 1
                    self.empty_polls += 1
                    self._slots.release()
                    self._idle(mark)
                    continue
                with self._count_lock:
                    self._in_flight += 1
                    self.in_flight_peak = max(self.in_flight_peak, self._in_flight)
                self.polls_under_way -= 1
                pool.submit(self._run_batch, messages)

    def _run_batch(self, messages: list[dict[str, Any]]) -> None:
        try:
            self._process(messages)
        except Exception:  # noqa: BLE001 - the batch's messages return after the visibility timeout
            LOG.exception("%s for %s failed on a batch", self.kind, self.function.function_name)
        finally:
            with self._count_lock:
                self._in_flight -= 1
            self._slots.release()
            self._wake()   # the message groups this batch held may have more to deliver

    def _record(self, message: dict[str, Any]) -> dict[str, Any]:
        attributes = dict(message.get("Attributes") or {})
        message_attributes = {}
        for name, attr in (message.get("MessageAttributes") or {}).items():
            converted: dict[str, Any] = {
                "stringListValues": [], "binaryListValues": [], "dataType": attr.get("DataType")}
            if "StringValue" in attr:
                converted["stringValue"] = attr["StringValue"]
            if "BinaryValue" in attr:
                converted["binaryValue"] = base64.b64encode(attr["BinaryValue"]).decode()
            message_attributes[name] = converted
        body = message.get("Body", "")
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": body,
            "attributes": attributes,
            "messageAttributes": message_attributes,
            "md5OfBody": message.get("MD5OfBody") or hashlib.md5(body.encode()).hexdigest(),  # noqa: S324
            "eventSource": "aws:sqs",
            "eventSourceARN": self.queue_arn,
            "awsRegion": self.region,
        }

    def _filter_view(self, record: dict[str, Any]) -> dict[str, Any]:
        view = dict(record)
        try:
            view["body"] = json.loads(record["body"])
        except (TypeError, ValueError):
            pass
        return view

    def poll_once(self) -> bool:
        """One receive and, if it got messages, their batch, in the calling thread."""
        messages = self._receive()
        if not messages:
            return False
        self._process(messages)
        return True

    def _receive(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        while len(messages) < self.batch_size and not self._stop.is_set():
            response = self.client.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=min(10, self.batch_size - len(messages)),
                WaitTimeSeconds=0,
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["All"],
            )
            received = response.get("Messages") or []
            messages.extend(received)
            if len(received) < 10:
                break
        return messages

    def _process(self, messages: list[dict[str, Any]]) -> None:
        records = [self._record(m) for m in messages]
        to_delete: list[dict[str, Any]] = []
        batch = []
        for record in records:
            if record_passes(self.filters, self._filter_view(record)):
                batch.append(record)
            else:  # filtered-out messages are deleted, as Lambda does
                self.stats.filtered_out += 1
                to_delete.append(record)
        if batch:
            self.stats.records += len(batch)
            result, error = self._invoke({"Records": batch})
            failed = set(self._failed_ids(result, error, [r["messageId"] for r in batch]))
            self.stats.failures += len(failed)
            to_delete.extend(r for r in batch if r["messageId"] not in failed)
            if failed:
                LOG.info("%s: %d of %d records failed; they return after the visibility timeout",
                         self.function.function_name, len(failed), len(batch))
        for start in range(0, len(to_delete), 10):
            chunk = to_delete[start:start + 10]
            self.client.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": r["receiptHandle"]} for i, r in enumerate(chunk)],
            )


# --------------------------------------------------------------------------------------------
# DynamoDB Streams
# --------------------------------------------------------------------------------------------


def answer_as_json(client: Any, operation: str) -> None:
    """Make ``client`` answer ``operation`` with the response's JSON as it came, unparsed.

    A stream record's images in botocore's parse become Python values (bytes, a datetime) that the
    poller had to turn back into the wire form Lambda's event carries; under the bench that parse
    and its undoing were the largest share of the stream pollers' CPU. A ``before-call`` handler
    (botocore's hook for answering a call itself) sends the request the client built and signed,
    and loads the JSON: the images stay as DynamoDB wrote them. An error answer still goes through
    botocore's parser, so the client raises the same exception as before."""
    from botocore import parsers

    service_id = client.meta.service_model.service_id.hyphenize()
    errors = parsers.create_parser(client.meta.service_model.protocol)

    def answer(model: Any, params: dict[str, Any], **_: Any) -> tuple[Any, dict[str, Any]]:
        endpoint = client._endpoint   # noqa: SLF001 - the client's own connection pool and signer
        response = endpoint.http_session.send(endpoint.create_request(params, model))
        if response.status_code >= 300:
            return response, errors.parse({"headers": response.headers, "status_code": response.status_code,
                                           "body": response.content}, model.output_shape)
        parsed = json.loads(response.content or b"{}")
        parsed["ResponseMetadata"] = {"HTTPStatusCode": response.status_code, "HTTPHeaders": dict(response.headers)}
        return response, parsed

    client.meta.events.register(f"before-call.{service_id}.{operation}", answer)


@dataclass
class _ShardState:
    shard_id: str
    iterator: str | None
    pending: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 0


class DynamoDbStreamPoller(_Poller):
    kind = "ddb-stream-poller"

    def __init__(self, *, stream_arn: str, streams_client: Any, sqs_client: Any = None,
                 retry_backoff: float = 0.2, idle_seconds: float = 0.25, **kwargs: Any):
        super().__init__(client=streams_client, **kwargs)
        # Lambda reads each shard four times a second when it finds nothing; every empty
        # GetRecords is a request DynamoDB Local serves, so asking ten times a second cost more of
        # its CPU than the holds did on a quiet stack. Records found are read again at once.
        self.idle_seconds = max(idle_seconds, self.poll_interval)
        answer_as_json(streams_client, "GetRecords")   # records in the wire form, as Lambda's event has them
        self.stream_arn = stream_arn
        self.sqs = sqs_client
        self.starting_position = self.mapping.get("StartingPosition", "LATEST")
        self.max_retries = int(self.mapping.get("MaximumRetryAttempts", -1))
        self.bisect = bool(self.mapping.get("BisectBatchOnFunctionError", False))
        destination = ((self.mapping.get("DestinationConfig") or {}).get("OnFailure") or {})
        self.on_failure_arn: str | None = destination.get("Destination")
        self.retry_backoff = retry_backoff
        self._shards: dict[str, _ShardState] = {}
        self._retry_at = 0.0
        self._ready = threading.Event()
        self._nudged = threading.Event()

    def _idle(self, mark: Any) -> None:
        if self._nudged.wait(self.idle_seconds):
            self._nudged.clear()

    def nudge(self) -> None:
        self._nudged.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._nudged.set()
        super().stop(timeout)

    def busy(self) -> bool:
        return self.polls_under_way > 0 or any(state.pending for state in list(self._shards.values()))

    def wait_ready(self, timeout: float = 5.0) -> bool:
        return self._ready.wait(timeout)

    def _discover(self) -> None:
        description = self.client.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]
        for shard in description.get("Shards", []):
            sid = shard["ShardId"]
            if sid not in self._shards:
                iterator = self.client.get_shard_iterator(
                    StreamArn=self.stream_arn, ShardId=sid,
                    ShardIteratorType=self.starting_position)["ShardIterator"]
                self._shards[sid] = _ShardState(sid, iterator)
        self._ready.set()

    def _record(self, raw: dict[str, Any]) -> dict[str, Any]:
        record = dict(raw)
        ddb = dict(record.get("dynamodb") or {})
        # the answer's JSON as it came (answer_as_json): images already in the event's wire form
        created = ddb.get("ApproximateCreationDateTime")
        if isinstance(created, float):   # epoch seconds; Lambda's event has whole ones
            ddb["ApproximateCreationDateTime"] = int(created)
        record["dynamodb"] = ddb
        record["awsRegion"] = self.region
        record["eventSourceARN"] = self.stream_arn
        return record

    def _forget_iterator(self, iterator: str) -> None:
        # moto keeps every iterator it hands out; a poller asking 10 times a second would leak.
        try:
            from moto.dynamodbstreams.models import dynamodbstreams_backends

            for account in list(dynamodbstreams_backends.keys()):
                backend = dynamodbstreams_backends[account].get(self.region)
                if backend is not None:
                    backend.shard_iterators.pop(iterator, None)
        except Exception:  # noqa: BLE001 - best effort only
            pass

    def poll_once(self) -> bool:
        if not self._ready.is_set() or not self._shards:
            self._discover()
        busy = False
        for state in self._shards.values():
            if not state.pending and state.iterator:
                response = self.client.get_records(ShardIterator=state.iterator, Limit=1000)
                self._forget_iterator(state.iterator)
                state.iterator = response.get("NextShardIterator")
                records = [self._record(r) for r in response.get("Records", [])]
                kept = [r for r in records if record_passes(self.filters, r)]
                self.stats.filtered_out += len(records) - len(kept)
                state.pending.extend(kept)
            if state.pending:
                if time.monotonic() < self._retry_at:
                    continue
                busy = self._deliver(state) or busy
        return busy

    def _deliver(self, state: _ShardState) -> bool:
        batch = state.pending[: self.batch_size]
        self.stats.records += len(batch)
        result, error = self._invoke({"Records": batch})
        ids = [r["dynamodb"]["SequenceNumber"] for r in batch]
        failed = self._failed_ids(result, error, ids)
        if not failed:
            del state.pending[: len(batch)]
            state.attempts = 0
            return True
        self.stats.failures += 1
        # checkpoint: everything before the lowest failed sequence number is done
        lowest = min(int(s) for s in failed)
        done = sum(1 for s in ids if int(s) < lowest)
        del state.pending[:done]
        state.attempts += 1
        if self.max_retries >= 0 and state.attempts > self.max_retries:
            dropped = state.pending[: len(batch) - done]
            del state.pending[: len(batch) - done]
            state.attempts = 0
            self._send_to_destination(state, dropped, error)
            return True
        if error is not None and self.bisect and len(batch) - done > 1:
            # Lambda splits the failing batch and retries the halves; delivering the first half
            # next time is what a smaller batch size does.
            self.batch_size = max(1, (len(batch) - done) // 2)
        self._retry_at = time.monotonic() + self.retry_backoff * min(state.attempts, 5)
        return False

    def _send_to_destination(self, state: _ShardState, records: list[dict[str, Any]], error: Any) -> None:
        self.batch_size = int(self.mapping.get("BatchSize") or 10)
        if not records:
            return
        LOG.warning("%s: giving up on %d stream records after %d retries",
                    self.function.function_name, len(records), self.max_retries)
        if not self.on_failure_arn or self.sqs is None:
            return
        now = dt.datetime.now(dt.timezone.utc)
        first = records[0]["dynamodb"]
        last = records[-1]["dynamodb"]
        message = {
            "requestContext": {
                "requestId": str(uuid.uuid4()),
                "functionArn": self.function.arn,
                "condition": "RetryAttemptsExhausted",
                "approximateInvokeCount": self.max_retries + 1,
            },
            "responseContext": {
                "statusCode": 200,
                "executedVersion": "$LATEST",
                "functionError": "Unhandled" if error is not None else None,
            },
            "version": "1.0",
            "timestamp": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "DDBStreamBatchInfo": {
                "shardId": state.shard_id,
                "startSequenceNumber": first["SequenceNumber"],
                "endSequenceNumber": last["SequenceNumber"],
                "approximateArrivalOfFirstRecord": first.get("ApproximateCreationDateTime"),
                "approximateArrivalOfLastRecord": last.get("ApproximateCreationDateTime"),
                "batchSize": len(records),
                "streamArn": self.stream_arn,
            },
        }
        name = self.on_failure_arn.rsplit(":", 1)[-1]
        account = self.on_failure_arn.split(":")[4]
        url = self.sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
        kwargs: dict[str, Any] = {}
        if name.endswith(".fifo"):
            kwargs = {"MessageGroupId": state.shard_id, "MessageDeduplicationId": str(uuid.uuid4())}
        self.sqs.send_message(QueueUrl=url, MessageBody=json.dumps(message, default=str), **kwargs)
        self.stats.sent_to_destination += len(records)


# --------------------------------------------------------------------------------------------
# EventBridge schedules
# --------------------------------------------------------------------------------------------

_RATE = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_UNIT_SECONDS = {"minute": 60, "minutes": 60, "hour": 3600, "hours": 3600, "day": 86400, "days": 86400}


def rate_seconds(expression: str) -> float | None:
    """Seconds between runs of a ``rate(...)`` schedule; None for cron expressions (not emulated)."""
    match = _RATE.match(expression.strip())
    if not match:
        return None
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2)]


class ScheduleInvoker(_Poller):
    """Invokes a function on a rule's ``rate(...)`` schedule with a Scheduled Event, as
    EventBridge does. The first run happens one interval after start. The intervals are on the
    stack's clock (devstack/aws/clock.py): advancing it past a run's moment makes the run, once
    however many intervals the move spans (the clock's steps are the other timers' moments), and
    the next one is an interval after that run."""

    kind = "schedule"

    def __init__(self, *, rule_arn: str, interval_seconds: float, **kwargs: Any):
        super().__init__(client=None, **kwargs)
        self.rule_arn = rule_arn
        self.interval = interval_seconds

    def _run(self) -> None:
        from . import clock as stack_clock

        while True:
            clock = stack_clock.current
            if clock is None:
                if self._stop.wait(self.interval):
                    return
            elif not clock.sleep(self.interval, kind=f"schedule:{self.function.logical_id}", stop=self._stop,
                                 step=False):
                return
            self.polls_under_way += 1
            try:
                self.poll_once()
            except Exception:  # noqa: BLE001 - a schedule never dies
                LOG.exception("scheduled run of %s failed", self.function.function_name)
            finally:
                self.polls_under_way -= 1

    def stop(self, timeout: float = 5.0) -> None:
        from . import clock as stack_clock

        self._stop.set()
        if stack_clock.current is not None:
            stack_clock.current.wake()
        super().stop(timeout)

    def poll_once(self) -> bool:
        from . import clock as stack_clock

        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stack_clock.now_seconds()))
        event = {"version": "0", "id": str(uuid.uuid4()), "detail-type": "Scheduled Event", "source": "aws.events",
                 "account": self.rule_arn.split(":")[4], "time": now, "region": self.region,
                 "resources": [self.rule_arn], "detail": {}}
        _, error = self._invoke(event)
        if error is not None:
            self.stats.failures += 1
        return True
