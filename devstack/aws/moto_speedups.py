"""Three moto 5.2.5 costs that the stack's process paid per request under the bench's load.

Found with `python -m devstack.bench --sample-stack` (devstack/sampler.py), each repeated work
whose result cannot differ between calls:

* **EventBridge input transformers.** moto compiles every `InputPathsMap` JSONPath again for each
  event and target (`jsonpath_ng.ext.parse` builds a PLY lexer and parser every time: most of a
  `PutEvents`). The compiled expression is only read by `find`, so one per path text is kept.
* **SQS clock reads.** Every message's `visible`/`delayed` check, and the queue attributes a FIFO
  send computes three times (counts over all its messages), read the clock through naive
  `datetime` arithmetic. `time.time()` gives the same milliseconds since the epoch.
* **Step Functions definitions.** Each execution lexes and parses its state machine's ASL again
  (ANTLR, 10-100 ms of CPU). The parse tree of a definition text is kept; the evaluation
  components are still built fresh for each execution (they are where an execution's state
  could live), so executions share nothing they could change.
"""
from __future__ import annotations

import functools
import threading
import time
from typing import Any

_ASL_TREES: dict[str, Any] = {}
_ASL_LOCK = threading.Lock()
_ASL_KEEP = 32  # state machine definitions of one template: a few


def install() -> None:
    _cache_jsonpath()
    _fast_sqs_clock()
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

    def unix_time_millis(dt: Any = None) -> float:
        return time.time() * 1000.0 if dt is None else original(dt)

    unix_time_millis._devstack_fast = True  # type: ignore[attr-defined]
    sqs_models.unix_time_millis = unix_time_millis


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
