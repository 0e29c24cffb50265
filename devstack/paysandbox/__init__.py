"""Holdfast payment sandbox: a local, YooKassa API v3 compatible provider with fault injection.

A development tool only; it is never deployed. See docs/payment-sandbox.md.
"""
from .clock import SandboxClock
from .control import SandboxControl, SandboxControlError
from .server import DEFAULT_PORT, DEFAULT_SECRET_KEY, DEFAULT_SHOP_ID, SandboxServer

__all__ = ["SandboxServer", "SandboxControl", "SandboxControlError", "SandboxClock",
           "DEFAULT_PORT", "DEFAULT_SHOP_ID", "DEFAULT_SECRET_KEY"]
