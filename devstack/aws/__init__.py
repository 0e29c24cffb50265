"""Embedded local AWS stack for development and tests (never deployed): moto on one port with
in-process Lambda handlers, an API Gateway stand-in and Lambda-like event-source pollers, all
created from template.yaml. See docs/local-stack.md."""

import logging

from .stack import LOCAL_PROVIDER_SECRET, LOCAL_SECRETS, EmbeddedStack, local_parameters

logging.getLogger("devstack.aws").addHandler(logging.NullHandler())

__all__ = ["LOCAL_PROVIDER_SECRET", "LOCAL_SECRETS", "EmbeddedStack", "local_parameters"]
