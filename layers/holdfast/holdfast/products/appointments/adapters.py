"""Resources (rooms, halls, specialists) and reads of their time granules.

  RESOURCE#<resource_id>  META   the resource: name, time zone, opening hours
  OWNER#<organizer_id>    RESOURCE#<resource_id>   the organizer's resources, for GET /resources
                                   (written before META, as an offering's OFFERING# entry: a
                                   resource whose META never came is left out of the list)

Granule items and their claims are in granule_claims.py; services are offerings (offerings_store.py).
"""
from __future__ import annotations

from typing import Any, Iterable

from botocore.exceptions import ClientError

from holdfast.ports import ItemExists
from holdfast.adapters.codec import Table, _attrs, _code, put_new
from holdfast.adapters.granule_claims import day_partition

#: The items that carry an ``organizer_id`` (kinds/products.py, ``owned_items``): resources.
ORGANIZER_OWNED = (("RESOURCE#", "META"),)


def owner_entry(item: dict[str, Any]) -> dict[str, Any] | None:
    """An owned resource's entry in its organizer's index (``Product.owner_entry``: what
    ``put_resource`` writes first, which adoption and ``backfill-owner-index`` write for resources
    that got an owner, or were made, before the index); None for any other item."""
    if not str(item.get("pk", "")).startswith("RESOURCE#") or item.get("sk") != "META" or not item.get("organizer_id"):
        return None
    return {"pk": f"OWNER#{item['organizer_id']}", "sk": f"RESOURCE#{item['resource_id']}",
            "resource_id": item["resource_id"], "created_at": item.get("created_at") or ""}


class ResourceStore(Table):
    def put_resource(self, resource: dict[str, Any]) -> None:
        """Write a new resource; ItemExists if its id is taken (a repeat of the same request).
        An owned resource's entry in its organizer's index first (a plain put: a repeat rewrites
        the same entry), so the list never misses a resource that exists."""
        entry = owner_entry({"pk": f"RESOURCE#{resource['resource_id']}", "sk": "META", **resource})
        if entry is not None:
            self.client.put_item(TableName=self.table, Item=_attrs(entry))
        try:
            self.client.put_item(**put_new(self.table, {"pk": f"RESOURCE#{resource['resource_id']}", "sk": "META",
                                                        **resource})["Put"])
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                raise ItemExists(resource["resource_id"]) from None
            raise

    def get_resource(self, resource_id: str) -> dict[str, Any] | None:
        item = self._get(f"RESOURCE#{resource_id}", "META")
        if item is None:
            return None
        return {key: value for key, value in item.items() if key not in ("pk", "sk")}

    def owned_resources(self, organizer_id: str) -> list[dict[str, Any]]:
        """Every resource the organizer created, whole, oldest first (by creation, then id)."""
        index = self._query_prefix(f"OWNER#{organizer_id}", "RESOURCE#")
        index.sort(key=lambda item: (item["created_at"], item["resource_id"]))
        found = self._batch_get([{"pk": f"RESOURCE#{item['resource_id']}", "sk": "META"} for item in index])
        return [{key: value for key, value in found[(f"RESOURCE#{item['resource_id']}", "META")].items()
                 if key not in ("pk", "sk")}
                for item in index if (f"RESOURCE#{item['resource_id']}", "META") in found]

    def read_granules(self, resource_id: str, utc_days: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Every claimed granule of a resource on the given UTC days, by "YYYY-MM-DDTHH:MM"
        (consistent reads: a plan made from them is checked by its claims anyway)."""
        found: dict[str, dict[str, Any]] = {}
        for day in utc_days:
            for item in self._query_prefix(day_partition(resource_id, day), "G#"):
                found[f"{day}T{item['sk'].removeprefix('G#')}"] = item
        return found

    #: the calls the table's store answers through this part (adapters/dynamo.py binds each)
    STORE_CALLS = (put_resource, get_resource, owned_resources, read_granules)
