"""Composition instead of mixins (issue 29): no class of the deployed package is a mixin or
inherits more than one class (the ports' Protocols, interfaces that combine narrower ones, aside),
and the table's store answers every call through exactly one of its parts."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import holdfast
from holdfast.adapters import dynamo
from holdfast.adapters.codec import Table
from holdfast.kinds import products


def _classes() -> list[type]:
    found = []
    for module in pkgutil.walk_packages(holdfast.__path__, "holdfast."):
        loaded = importlib.import_module(module.name)
        found += [value for value in vars(loaded).values()
                  if inspect.isclass(value) and value.__module__ == loaded.__name__]
    return found


def test_no_class_is_a_mixin_or_inherits_from_two():
    classes = _classes()
    assert len(classes) > 100   # the walk found the package, not an empty path
    mixins = [cls.__qualname__ for cls in classes if cls.__name__.endswith("Mixin")]
    assert mixins == []
    several = [f"{cls.__module__}.{cls.__qualname__}{tuple(base.__name__ for base in cls.__bases__)}"
               for cls in classes if len([base for base in cls.__bases__ if base is not object]) > 1
               and not getattr(cls, "_is_protocol", False)]
    assert several == []


def test_no_class_name_is_defined_twice():
    """One name per thing (issue 48): a port takes its role's name and the adapter that answers it
    its technology's (``ports.WaitlistStore``, ``adapters.waitlist_store.DynamoWaitlistStore``), so
    "go to definition" on a class name has one answer."""
    where: dict[str, set[str]] = {}
    for cls in _classes():
        where.setdefault(cls.__qualname__, set()).add(cls.__module__)
    twice = {name: sorted(modules) for name, modules in where.items() if len(modules) > 1}
    assert twice == {}


def _public(cls: type) -> set[str]:
    return {name for name, value in vars(cls).items()
            if not name.startswith("_") and (callable(value) or isinstance(value, (staticmethod, classmethod)))}


def test_every_public_call_of_a_core_part_is_answered_by_the_store():
    store = dynamo.BookingStore("bookings", client=object())
    for part, (cls, names) in dynamo.PARTS.items():
        assert _public(cls) - set(names) == set(), f"{cls.__name__} offers calls the store does not route"
        for name in names:
            assert getattr(store, name) == getattr(getattr(store, part), name), name


def test_no_product_part_answers_a_call_a_core_part_or_another_product_part_answers():
    routed = {name for _, names in dynamo.PARTS.values() for name in names}
    seen: dict[str, str] = {}
    for product in products.registered():
        for reference in product.store_parts:
            own = _public(products.resolve(reference)) - set(vars(Table))
            assert own & routed == set(), f"{reference} shadows the core's {sorted(own & routed)}"
            doubly = {name: seen[name] for name in own if name in seen}
            assert doubly == {}, f"{reference} and {doubly} answer the same calls"
            seen.update(dict.fromkeys(own, reference))


class _Reads:
    def get_booking(self) -> None: ...


class _Writes:
    def commit(self) -> None: ...

    def get_booking(self) -> None: ...


def test_a_call_routed_to_a_part_that_lacks_it_or_to_another_method_fails_loudly():
    with pytest.raises(AttributeError, match="has no attribute 'commit'"):
        class Lacking:
            commit = dynamo._Part("reads", _Reads.commit)
    with pytest.raises(TypeError, match="is routed to 'writes'"):
        class Elsewhere:
            commit = dynamo._Part("writes", _Writes.get_booking)


def test_every_call_of_the_store_is_declared_once():
    """A class body may assign a name twice (the last one wins, silently): the store's may not, so a
    call claimed by two parts is seen. Its declarations are read from the source, as an editor does."""
    import ast

    tree = ast.parse(inspect.getsource(dynamo.BookingStore))
    declared = [target.id for node in tree.body[0].body if isinstance(node, ast.Assign) for target in node.targets
                if isinstance(target, ast.Name)]
    assert len(declared) > 60 and len(declared) == len(set(declared))
    assert sorted(declared) == sorted(name for _, names in dynamo.PARTS.values() for name in names)


def test_a_swapped_client_reaches_every_part_and_the_products_parts():
    store = dynamo.BookingStore("bookings", client=object())
    swapped = object()
    store.client = swapped
    assert {id(getattr(store, part).db.client) for part in dynamo.PARTS} == {id(swapped)}
    assert all(part.client is swapped for part in store._product_parts())


def test_the_store_answers_a_products_calls_only_as_its_part_declares_them():
    """No fallback (issue 48): ``BookingStore`` has no ``__getattr__``, each product part declares
    every public call it answers (``STORE_CALLS``), and each such call is on the store's class,
    where reading it gives the part's own function ("go to definition" follows it)."""
    assert "__getattr__" not in vars(dynamo.BookingStore)
    store = dynamo.BookingStore("bookings", client=object())
    bound = dynamo.bind_product_calls()
    parts = [products.resolve(reference) for product in products.registered() for reference in product.store_parts]
    assert len(parts) >= 3 and set(parts) <= set(bound)
    for part in parts:
        declared = {function.__name__ for function in dynamo.declared_calls(part)}
        assert _public(part) - set(vars(Table)) == declared, f"{part.__qualname__} answers calls it does not declare"
        for name in declared:
            assert getattr(dynamo.BookingStore, name) is vars(part)[name], name
            assert getattr(store, name) == getattr(store.product_part(part), name), name


class _Undeclared(Table):
    def shed_count(self) -> int:
        return 0

    def shed_size(self) -> int:
        return 0

    STORE_CALLS = (shed_size,)


class _Silent(Table):
    def shed_count(self) -> int:
        return 0


def test_a_product_parts_call_it_does_not_declare_is_not_reached():
    products.register_product(products.Product(name="sheds", kinds=(),
                                               store_parts=(f"{__name__}:_Undeclared",)))
    try:
        store = dynamo.BookingStore("bookings", client=object())
        assert store.shed_size() == 0
        with pytest.raises(AttributeError):
            store.shed_count()
    finally:
        products.unregister_product("sheds")
    dynamo.bind_product_calls()
    assert not hasattr(dynamo.BookingStore, "shed_size")   # an unregistered product's calls are gone
    products.register_product(products.Product(name="sheds", kinds=(), store_parts=(f"{__name__}:_Silent",)))
    try:
        with pytest.raises(TypeError, match="declares no STORE_CALLS"):
            dynamo.BookingStore("bookings", client=object())
    finally:
        products.unregister_product("sheds")
        dynamo.bind_product_calls()
