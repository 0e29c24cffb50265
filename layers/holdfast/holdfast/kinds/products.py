"""Products: what the engine sells, each a package that plugs into a core naming none of them.

A product is a package under ``holdfast/products/`` (or, in a test, anywhere) whose ``PRODUCT``
says what it adds to the core:

- its inventory **kinds** (registered like any kind: the core reaches them through the registry);
- **payment purposes**: a provider payment that is not a booking's (a parking exit's) is handed,
  by the metadata key it carries, to the product's handler ``(store, clock, payment) -> str``;
- **store parts**: adapter classes the table's store is assembled with (wiring builds it), for the
  items only the product keeps (a lot's gates and tickets, a resource's opening hours);
- **view credentials**: what its kind's ``view_extras`` signs a booking's view with (an entry pass);
- **organizer-owned items**: the keys of its items that carry an ``organizer_id`` (a lot's gates),
  which the operators' adoption of objects written before organizers existed looks for;
- **messages**: what its customers' messages say that the core's do not (services/messages.py
  ``MessageParts``: its message types and their templates, its words, the values its bookings add).
- **listing**: the index items its publish writes for a published offering (its shelf), so that
  the operators' search reindex (search_reindex.py) writes the same ones.
- **texts**: the customer texts of its own steps in every language (domain/texts.py's table, a
  car entering a lot, a ticket checked in), which ``GET /texts`` serves beside the core's.
- **error texts**: the messages of its own errors in the languages other than English (a lot not
  found), which the API answers with as it does the core's (``error_message``).
- **scopes**: the organizer key scopes it adds, the scope each of its organizer routes needs, and
  which of its routes create an offering (domain/scopes.py; ``route_scopes()`` joins them with
  the core's into the one table the request router reads).

Handlers, store parts, credentials, owned items, messages, listings, texts and error texts are named ``"module:attribute"`` and imported
only when first needed, so discovering the products costs a function's cold start no more than
importing their kinds. Each product's package registers itself as it is imported; ``discover()``, run when the kinds
registry is first imported, imports every package under ``holdfast/products/``:
adding a product adds a package and touches no file of the core or of another product
(docs/architecture.md, "Adding a product").
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Mapping

from .base import Kind


@dataclass(frozen=True)
class Product:
    name: str
    kinds: tuple[Kind, ...]
    #: provider payment metadata key -> "module:function" called as (store, clock, payment) -> str
    payment_purposes: Mapping[str, str] = field(default_factory=dict)
    #: "module:Class" adapters the table's store is assembled with
    store_parts: tuple[str, ...] = ()
    #: "module:function" returning what the kind's ``view_extras`` signs with (None: nothing)
    view_credentials: str | None = None
    #: "module:attribute" naming ``(pk prefix, sk prefix)`` pairs: the product's items an organizer owns
    owned_items: str | None = None
    #: "module:attribute" naming the product's ``services.messages.MessageParts`` (None: it adds nothing)
    messages: str | None = None
    #: "module:function" building a published offering's index items, the ones its publish writes
    #: (``(offering) -> items``; None: it is listed as an event is). The search reindex rewrites them with it.
    listing: str | None = None
    #: "module:attribute" naming ``{language: {key: sentence}}``: the texts of the product's own
    #: steps (``journal.<action>`` of the actions only it writes), in every language the core speaks
    texts: str | None = None
    #: "module:attribute" naming ``{language: {code: message}}``: the messages of the product's own
    #: errors in the languages other than English (domain/texts.py's ERROR_MESSAGES for the core's)
    error_texts: str | None = None
    #: organizer key scopes only this product's routes need
    scopes: tuple[str, ...] = ()
    #: (method, path as in template.yaml) -> scope, for each of its organizer routes
    route_scopes: Mapping[tuple[str, str], str] = field(default_factory=dict)
    #: its organizer routes that create an offering
    creates_offering: frozenset[tuple[str, str]] = frozenset()
    #: CSV export name -> "module:attribute" naming its ``domain.exports.ProductExport``: the
    #: exports whose rows are the product's own items (the core's are in domain/exports.py)
    exports: Mapping[str, str] = field(default_factory=dict)
    #: "module:function" naming ``(item) -> index item | None``: the entry an owned item of the
    #: product's (one of ``owned_items``, given its ``organizer_id``) has in its organizer's index,
    #: for items the product lists from such an index (a resource for ``GET /resources``); None: none
    owner_entry: str | None = None


_PRODUCTS: dict[str, Product] = {}


def register_product(product: Product) -> Product:
    """Add a product and its kinds (a product's package does this as it is imported; a second
    call with the same product changes nothing)."""
    from . import register

    if _PRODUCTS.get(product.name) is product:
        return product

    clash = [key for other in _PRODUCTS.values() if other.name != product.name
             for key in other.payment_purposes if key in product.payment_purposes]
    if clash:
        raise ValueError(f"product {product.name!r}: payment purpose {clash[0]!r} is another product's")
    for kind in product.kinds:
        register(kind)
    _PRODUCTS[product.name] = product
    return product


def unregister_product(name: str) -> None:
    from . import unregister

    product = _PRODUCTS.pop(name, None)
    for kind in product.kinds if product else ():
        unregister(kind.name)


def registered() -> tuple[Product, ...]:
    return tuple(_PRODUCTS.values())


def of_kind(kind_name: str) -> Product | None:
    return next((p for p in _PRODUCTS.values() if any(k.name == kind_name for k in p.kinds)), None)


def purpose_of(metadata: Mapping[str, Any]) -> str | None:
    """The handler of a provider payment that is not a booking's, by the metadata key it carries."""
    for product in _PRODUCTS.values():
        for key, handler in product.payment_purposes.items():
            if metadata.get(key):
                return handler
    return None


def customer_texts() -> dict[str, dict[str, str]]:
    """The core's customer texts (domain/texts.py) with every product's own, by language. A
    product may add keys, never change one of the core's or another product's."""
    from ..domain.texts import TEXTS

    joined = {language: dict(table) for language, table in TEXTS.items()}
    for product in _PRODUCTS.values():
        if not product.texts:
            continue
        for language, table in resolve(product.texts).items():
            taken = sorted(set(table) & set(joined.get(language, {})))
            if language not in joined or taken:
                raise ValueError(f"product {product.name!r}: texts {taken or language!r} are not its to add")
            joined[language].update(table)
    return joined


def error_message(code: str, language: str | None) -> str | None:
    """The message of an error ``code`` in ``language`` when it is not English and has one: the
    core's (domain/texts.py) or the product's whose error it is. A product may not give a core
    code another message, nor one of another product's."""
    from ..domain.texts import error_message as core_message, language_of

    found = core_message(code, language)
    for product in _PRODUCTS.values():
        if not product.error_texts:
            continue
        theirs = resolve(product.error_texts).get(language_of(language), {})
        if code in theirs:
            if found is not None:
                raise ValueError(f"product {product.name!r}: error text {code!r} is not its to add")
            found = theirs[code]
    return found


def every_scope() -> tuple[str, ...]:
    """Every scope a key may hold: the core's, then each product's own."""
    from ..domain.scopes import CORE_SCOPES

    return CORE_SCOPES + tuple(scope for product in _PRODUCTS.values() for scope in product.scopes
                               if scope not in CORE_SCOPES)


def route_scopes() -> dict[tuple[str, str], str]:
    """The one table of organizer routes and the scope each needs: the core's and every
    product's (a route named twice, or a scope nobody declares, is a defect: ValueError)."""
    from ..domain.scopes import ANY_KEY, CORE_ROUTE_SCOPES

    table = dict(CORE_ROUTE_SCOPES)
    known = set(every_scope()) | {ANY_KEY}
    for product in _PRODUCTS.values():
        for route, scope in product.route_scopes.items():
            if route in table or scope not in known:
                raise ValueError(f"product {product.name!r}: route {route} is taken or its scope {scope!r} unknown")
            table[route] = scope
    return table


def export_sources() -> dict[str, str]:
    """The exports whose rows are a product's items (``Product.exports``): name -> reference."""
    return {name: source for product in _PRODUCTS.values() for name, source in product.exports.items()}


def offering_routes() -> frozenset[tuple[str, str]]:
    """The organizer routes that create an offering, the core's and every product's."""
    from ..domain.scopes import CORE_CREATES_OFFERING

    return CORE_CREATES_OFFERING.union(*(product.creates_offering for product in _PRODUCTS.values()))


def resolve(reference: str) -> Any:
    """The attribute a ``"module:attribute"`` reference names, imported now."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def discover(package: str = "holdfast.products") -> None:
    """Import every product package directly under ``package`` (in name order)."""
    root = importlib.import_module(package)
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda found: found.name):
        if not info.ispkg:
            continue
        # A package registers itself as it is imported (one imported first, mid-import here, is
        # registered when its import finishes).
        importlib.import_module(f"{package}.{info.name}")
