"""Four moto 5.2.5 costs that the stack's process paid per request under the bench's load.

Found with `python -m devstack.measure.bench --sample-stack` (devstack/measure/sampler.py), each repeated work
whose result cannot differ between calls:

* **EventBridge input transformers.** moto compiles every `InputPathsMap` JSONPath again for each
  event and target (`jsonpath_ng.ext.parse` builds a PLY lexer and parser every time: most of a
  `PutEvents`). The compiled expression is only read by `find`, so one per path text is kept.
* **SQS clock reads.** Every message's `visible`/`delayed` check, and the queue attributes a FIFO
  send computes three times (counts over all its messages), read the clock through naive
  `datetime` arithmetic. `time.time()` gives the same milliseconds since the epoch (plus the
  stack clock's offset, devstack/aws/clock.py, so that advancing it ends delays and timeouts).
* **SQS queue attributes.** `Queue.attributes` builds every attribute at once, the three
  approximate message counts included (each a pass over every message in the queue), and moto
  reads it for one flag on every send (`ContentBasedDeduplication`: once per send to a standard
  queue, four times to a FIFO one), and three times per name in `GetQueueAttributes`. With a
  backlog in the notifications queue that was 6.5 CPU-s of a 60 s bench. The attributes are now
  a read-only mapping that computes each value when it is read, as the same `getattr` moto used.
* **Step Functions definitions.** Each execution lexes and parses its state machine's ASL again
  (ANTLR, 10-100 ms of CPU). The parse tree of a definition text is kept; the evaluation
  components are still built fresh for each execution (they are where an execution's state
  could live), so executions share nothing they could change.
"""
from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

_ASL_TREES: dict[str, Any] = {}
_ASL_LOCK = threading.Lock()
_ASL_KEEP = 32  # state machine definitions of one template: a few


def install() -> None:
    _cache_jsonpath()
    _fast_sqs_clock()
    _lazy_sqs_attributes()
    _cache_asl_trees()


def _cache_jsonpath() -> None:
    import jsonpath_ng.ext

    original = jsonpath_ng.ext.parse
    if getattr(original, "cache_info", None) is not None:
        return
    # moto imports `parse` inside the function on every call, so the module attribute is what it gets
    jsonpath_ng.ext.parse = functools.lru_cache(maxsize=256)(original)


def _fast_sqs_clock() -> None:
    import moto.sqs.models as sqs_models

    original = sqs_models.unix_time_millis
    if getattr(original, "_devstack_fast", False):
        return

    from . import clock as stack_clock

    def unix_time_millis(dt: Any = None) -> float:
        # now on the stack's clock (devstack/aws/clock.py): delays and visibility timeouts end
        # when it is advanced past them
        return stack_clock.now_seconds() * 1000.0 if dt is None else original(dt)

    unix_time_millis._devstack_fast = True  # type: ignore[attr-defined]
    sqs_models.unix_time_millis = unix_time_millis


class QueueAttributes(Mapping):
    """What moto's `Queue.attributes` returns, each value computed when it is read: the same
    names in the same order, booleans as "true"/"false", the two policies as moto renders them."""

    __slots__ = ("_queue", "_names")

    def __init__(self, queue: Any) -> None:
        self._queue = queue
        names = list(queue.BASE_ATTRIBUTES)
        if queue.fifo_queue:
            names += queue.FIFO_ATTRIBUTES
        if queue.kms_master_key_id:
            names += queue.KMS_ATTRIBUTES
        self._names = dict.fromkeys(names)

    def __getitem__(self, name: str) -> Any:
        if name not in self._names:
            raise KeyError(name)
        from moto.core.utils import camelcase_to_underscores

        queue = self._queue
        if name == "Policy" and queue.policy:
            return queue.policy
        if name == "RedrivePolicy" and queue.redrive_policy:
            return json.dumps(queue.redrive_policy)
        value = getattr(queue, camelcase_to_underscores(name))
        return str(value).lower() if isinstance(value, bool) else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names


def _lazy_sqs_attributes() -> None:
    import moto.sqs.models as sqs_models

    queue_class = sqs_models.Queue
    if getattr(queue_class, "_devstack_lazy_attributes", False):
        return
    queue_class._devstack_eager_attributes = queue_class.attributes   # moto's own, for the tests
    queue_class.attributes = property(QueueAttributes)  # type: ignore[assignment]
    queue_class._devstack_lazy_attributes = True


def _cache_asl_trees() -> None:
    from antlr4 import CommonTokenStream, InputStream
    from moto.stepfunctions.parser.asl.antlr.runtime.ASLLexer import ASLLexer
    from moto.stepfunctions.parser.asl.antlr.runtime.ASLParser import ASLParser
    from moto.stepfunctions.parser.asl.parse import asl_parser
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    parser_class = asl_parser.AmazonStateLanguageParser
    if getattr(parser_class, "_devstack_cached", False):
        return
    original = parser_class.parse

    def parse(definition: str) -> tuple[Any, Any]:
        with _ASL_LOCK:
            tree = _ASL_TREES.get(definition)
        if tree is None:
            listener = asl_parser.SyntaxErrorListener()
            lexer = ASLLexer(InputStream(definition))
            lexer.removeErrorListeners()  # an invalid definition is reported once, by moto's own parse below
            parser = ASLParser(CommonTokenStream(lexer))
            parser.removeErrorListeners()
            parser.addErrorListener(listener)
            tree = parser.state_machine()
            if listener.errors:
                # an invalid definition: moto's own parse raises exactly what it always did
                return original(definition)
            with _ASL_LOCK:
                if len(_ASL_TREES) >= _ASL_KEEP:
                    _ASL_TREES.clear()
                _ASL_TREES[definition] = tree
        return Preprocessor().visit(tree), tree

    parser_class.parse = staticmethod(parse)
    parser_class._devstack_cached = True
