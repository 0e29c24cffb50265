"""The local stack's moto speed-ups (devstack/aws/moto_speedups.py) do once what cannot change,
and nothing else: each test counts the expensive step, then checks the result is unchanged."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from devstack.aws import moto_speedups

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _installed() -> None:
    moto_speedups.install()


def test_a_definition_is_parsed_once_and_each_execution_gets_fresh_components(monkeypatch):
    from moto.stepfunctions.parser.asl.antlr.runtime.ASLParser import ASLParser
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    parses = []
    original = ASLParser.state_machine

    def counting(self):
        parses.append(1)
        return original(self)

    monkeypatch.setattr(ASLParser, "state_machine", counting)
    # a text no other test parses, so the cache starts without it
    definition = (REPO_ROOT / "statemachines" / "hold_expiry.asl.json").read_text() + "\n"
    first, tree = AmazonStateLanguageParser.parse(definition)
    second, same_tree = AmazonStateLanguageParser.parse(definition)
    assert len(parses) == 1
    assert same_tree is tree
    assert first is not second  # evaluation components are never shared between executions
    assert type(first) is type(second)


def test_an_invalid_definition_still_fails_as_moto_reports_it():
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser, ASLParserException

    with pytest.raises(ASLParserException):
        AmazonStateLanguageParser.parse('{"StartAt": "A", "States": {"A": {"Type": ')


def test_jsonpath_compiled_once_per_text():
    import jsonpath_ng.ext

    expr = jsonpath_ng.ext.parse("$.detail.booking_id")
    assert jsonpath_ng.ext.parse("$.detail.booking_id") is expr
    assert [m.value for m in expr.find({"detail": {"booking_id": "b-1"}})] == ["b-1"]
    assert expr.find({"detail": {}}) == []


def test_sqs_clock_is_the_same_epoch_milliseconds():
    import datetime

    import moto.sqs.models as sqs_models
    from moto.core.utils import unix_time_millis

    fast = sqs_models.unix_time_millis
    assert getattr(fast, "_devstack_fast", False)
    assert abs(fast() - unix_time_millis()) < 50
    moment = datetime.datetime(2026, 12, 1, 8, 0, 0)
    assert fast(moment) == unix_time_millis(moment)
    assert abs(fast() / 1000.0 - time.time()) < 0.05
