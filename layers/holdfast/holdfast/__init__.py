"""Holdfast: a booking engine that holds limited places while the customer pays.

Layers, from the inside out:
- ``holdfast.domain``: pure rules (statuses and transitions, allocation, money); no I/O.
- ``holdfast.ports``: what the services need from outside (narrow Protocols) and the outcomes
  those parts report; typing only.
- ``holdfast.services``: use cases; each takes its collaborators explicitly, typed by the ports.
- ``holdfast.adapters``: DynamoDB, the payment provider, Step Functions, SQS, secrets; they
  implement the ports, and ``holdfast.wiring`` builds them.
- ``holdfast.entry.http``: shared pieces of the thin Lambda handlers (errors, identity).
"""
