"""A gate's sync sequence: the core's ledger of a device's numbered passes
(adapters/checkin_sync_store.py), one partition per gate, ``GATESYNC#<lot>#<gate>``."""
from __future__ import annotations

from holdfast.adapters.checkin_sync_store import SequenceStore


class GateSyncStore(SequenceStore):
    PREFIX = "GATESYNC"
