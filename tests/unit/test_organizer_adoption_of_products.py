"""The organizer adoption (holdfast/tools/organizer_adoption.py) finds a product's owned items through the
registry (kinds/products.py, ``owned_items``): a product the core has never heard of has its
unowned items adopted, and nothing else of it."""
from __future__ import annotations

import pytest

from holdfast.adapters.codec import _attrs
from holdfast.adapters.organizers_store import OrganizerStore
from holdfast.kinds.products import Product, register_product, unregister_product
from holdfast.tools.organizer_adoption import adopt
from holdfast.services.organizers import OrganizerService

#: what the product below declares: a shed (``META``) carries an owner, its log entries do not
SHED_OWNED = (("SHED#", "META"),)


@pytest.fixture
def sheds():
    register_product(Product(name="sheds", kinds=(), owned_items=f"{__name__}:SHED_OWNED"))
    yield
    unregister_product("sheds")


def test_a_products_declared_items_are_adopted_and_its_other_items_left_alone(sheds, store, clock):
    organizers = OrganizerService(OrganizerStore(store.table, store.client), clock, lambda: b"adoption-hash-key-01")
    acme = organizers.create("Acme", api_key="acme-key-0123456789")["organizer_id"]
    for item in ({"pk": "SHED#1", "sk": "META"}, {"pk": "SHED#1", "sk": "LOG#0001"},
                 {"pk": "SHED#2", "sk": "META", "organizer_id": "someone-else"}):
        store.client.put_item(TableName=store.table, Item=_attrs(item))

    done = adopt(store.client, store.table, acme)

    def owner(pk: str, sk: str) -> str | None:
        item = store.client.get_item(TableName=store.table, Key=_attrs({"pk": pk, "sk": sk}))["Item"]
        return item.get("organizer_id", {}).get("S")

    assert done.adopted == 1 and owner("SHED#1", "META") == acme
    assert owner("SHED#1", "LOG#0001") is None and owner("SHED#2", "META") == "someone-else"
    assert adopt(store.client, store.table, acme).adopted == 0
