"""The parity tests run first in a session: they deploy a local stack of their own (module scope),
and only one EmbeddedStack may live in a process, while the integration suite's session-scoped stack
lives until the session ends. Run first, the parity stack is gone before that one starts."""
from __future__ import annotations


def pytest_collection_modifyitems(session, config, items):
    parity = [item for item in items if item.nodeid.startswith("tests/parity/")]
    if parity and len(parity) < len(items):
        chosen = {id(item) for item in parity}
        items[:] = parity + [item for item in items if id(item) not in chosen]
