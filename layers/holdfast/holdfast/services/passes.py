"""A booking's pass as a picture a gate's camera reads: the kind's signed token as a QR code,
shown to the booking's own customer only."""
from __future__ import annotations

import io
from typing import Callable

from ..domain.booking import Booking
from ..domain.errors import Forbidden, NotFound
from ..ports import BookingReads

#: Error correction M (15%): a phone screen with glare or a crack still scans, and a ~350
#: character token stays a code small enough for a gate's camera at arm's length.
ERROR_CORRECTION = "m"
#: Modules of white around the code: the QR specification's quiet zone.
QUIET_ZONE = 4


def qr_code(text: str):
    """``text`` as the QR code every pass is drawn as (the page's SVG, a message's image): one
    error correction and quiet zone for both, so what a gate reads never depends on where it came from."""
    import segno

    return segno.make(text, error=ERROR_CORRECTION, micro=False)


class PassService:
    def __init__(self, store: BookingReads, pass_of: Callable[[Booking], str | None],
                 passes_of: Callable[[Booking], dict[str, str]] | None = None) -> None:
        self.store = store
        self.pass_of = pass_of
        #: a booking's passes for several holders, by id (an event's tickets)
        self.passes_of = passes_of or (lambda booking: {})

    def token(self, booking_id: str, customer_id: str, pass_id: str | None = None) -> str:
        """The booking's signed pass, as its view carries it; answered like the view for a
        booking that is not there or not the customer's, and ``no_pass`` while it has none
        (not paid yet, ended, or a kind that admits nobody by a pass)."""
        booking = self.store.get_booking(booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id}.", code="booking_not_found")
        if booking.customer_id != customer_id:
            raise Forbidden("This booking belongs to another customer.")
        token = self.pass_of(booking) if pass_id is None else self.passes_of(booking).get(pass_id)
        if not token:
            raise NotFound("This booking has no pass now: a pass is issued once it is paid, until it ends.",
                           code="no_pass")
        return token

    def svg(self, booking_id: str, customer_id: str, pass_id: str | None = None) -> str:
        """The pass (``pass_id``: that one of the booking's passes) as an SVG QR code (black on
        white, with its quiet zone and a title); a pass the booking does not have now is ``no_pass``."""
        code = qr_code(self.token(booking_id, customer_id, pass_id))
        out = io.BytesIO()
        code.save(out, kind="svg", scale=4, border=QUIET_ZONE, dark="#000", light="#fff", xmldecl=False,
                  title="Entry pass", nl=False)
        return out.getvalue().decode()
