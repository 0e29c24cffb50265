"""Fixtures for the local stack's self-tests: each stack is started once per module (moto's state
is process-wide, so only one EmbeddedStack runs at a time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from devstack.aws import EmbeddedStack

FIXTURES = Path(__file__).parent / "fixtures"
REPO_ROOT = Path(__file__).resolve().parents[2]


def start_stub_stack() -> EmbeddedStack:
    return EmbeddedStack(repo_root=FIXTURES, aws_port=0, api_port=0, wait_scale=0.0001,
                      stack_name="stub", poll_interval=0.05).start()


def start_real_stack() -> EmbeddedStack:
    return EmbeddedStack(repo_root=REPO_ROOT, aws_port=0, api_port=0, wait_scale=0.0001).start()


@pytest.fixture(scope="module")
def stub_stack():
    stack = start_stub_stack()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def real_stack():
    stack = start_real_stack()
    try:
        yield stack
    finally:
        stack.stop()
