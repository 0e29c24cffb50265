"""Builds the orders service from the core's wiring, once per cold start."""
from __future__ import annotations

from holdfast.wiring import bookings, cached


@cached
def orders():
    from .services import OrderService

    return OrderService(bookings())


class LineCredentials:
    """What an order's lines sign with: each line's kind's product's view credentials (its
    tickets' event keys, its entry pass's lot keys), resolved through the registry when asked."""

    def of(self, kind: str):  # noqa: ANN201 - whatever that product's kind signs with
        from holdfast.kinds import products

        product = products.of_kind(kind)
        reference = product.view_credentials if product else None
        return products.resolve(reference)() if reference else None


def line_credentials() -> LineCredentials:
    """The orders' view credentials (kinds/products.py ``view_credentials``)."""
    return LineCredentials()
