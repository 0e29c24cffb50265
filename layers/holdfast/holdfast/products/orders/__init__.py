"""Orders (issue 43): several lines, of events, appointment slots and parking of one organizer,
held in one transaction, paid with one payment and confirmed, expired, refunded and cancelled as
one booking of the ``order`` kind whose places are every line's claims (kind.py)."""
from holdfast.kinds.products import Product, register_product

from .kind import OrderKind

PRODUCT = register_product(Product(name="orders", kinds=(OrderKind(),),
                                   texts="holdfast.products.orders.texts:TEXTS",
                                   messages="holdfast.products.orders.messages:MESSAGES",
                                   view_credentials="holdfast.products.orders.wiring:line_credentials",
                                   # an order given away (a comp) takes places off the sale as a
                                   # 100 % code does: the codes scope
                                   route_scopes={("POST", "/admin/orders"): "codes"}))
