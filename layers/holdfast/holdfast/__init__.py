"""Holdfast: a booking engine that holds limited places while the customer pays.

Layers, from the inside out:
- ``holdfast.domain``: pure rules (statuses and transitions, allocation, money); no I/O.
- ``holdfast.services``: use cases; each takes its collaborators explicitly.
- ``holdfast.adapters``: DynamoDB, the payment provider, Step Functions, SQS, secrets.
- ``holdfast.http``: shared pieces of the thin Lambda handlers (errors, identity).
"""
