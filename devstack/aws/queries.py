"""A Query for moto 5.2.5 DynamoDB that reads one partition instead of sorting the whole table.

moto answers every Query by listing all the table's items, sorting them (with its slow typed
comparisons) and only then keeping those of the requested partition. Each Query therefore costs
O(N log N) in the size of the table, whichever partition it asks for. In the single-table design a
queue of a few thousand customers made reading an event's four pools take tens of milliseconds,
under the lock that keeps moto's writes atomic, and a 3,000-arrival burst took minutes.

Only the candidates change here, never the answer:

- a Query on the table gets the items of its own partition (moto then sorts them by sort key,
  exactly as before);
- a Query on an index gets every item unsorted, because moto sorts the index's results on the
  index keys and the table keys afterwards (a total order), so the first sort was wasted.

Scan is untouched: its pagination depends on the sorted order.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

_installed = False
_scope = threading.local()


def install() -> None:
    global _installed
    if _installed:
        return
    from moto.dynamodb.models.table import Table

    sorted_all_items = Table.all_items
    original_query = Table.query

    def all_items(self: Any) -> list[Any]:
        scope = getattr(_scope, "query", None)
        if scope is None or scope[0] is not self:
            return sorted_all_items(self)
        _, hash_key, index_name = scope
        if index_name is None:
            partition = self.items.get(hash_key)
            if partition is None:
                return []
            return list(partition.values()) if self.range_key_attr else [partition]
        if self.range_key_attr:
            return [item for partition in self.items.values() for item in partition.values()]
        return list(self.items.values())

    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[6] if len(args) > 6 else None)
        if (index_name is None and hash_key is None) or getattr(_scope, "bypass", False):
            return original_query(self, hash_key, *args, **kwargs)
        outer = getattr(_scope, "query", None)
        _scope.query = (self, hash_key, index_name)
        try:
            return original_query(self, hash_key, *args, **kwargs)
        finally:
            _scope.query = outer

    Table.all_items = all_items
    Table.query = query
    _installed = True


@contextmanager
def bypassed() -> Iterator[None]:
    """moto's own Query on this thread (tests compare the two)."""
    _scope.bypass = True
    try:
        yield
    finally:
        _scope.bypass = False
