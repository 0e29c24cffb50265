"""One rule of when a hold must carry a solved challenge (issue 42, finding 13), read by the hold
path and by every offering's view (an event's, a service's availability, a lot's): whenever the
hold would refuse a request without a token, the view the page reads first says
``captcha_required`` and names the widget to load, and whenever it says nothing, a hold without a
token goes through. Before, only the event's view read the offering's own flag: with
CaptchaOnHolds=on no view said a challenge was needed, so a page could only learn it from a refused
hold, and services and lots could not ask for one at all."""
from __future__ import annotations

from dataclasses import replace

import pytest

from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import ChallengeRefused
from holdfast.products.appointments.schemas import ResourceIn, ServiceIn, SlotBookingIn
from holdfast.products.appointments.services import AppointmentService
from holdfast.products.parking.schemas import LotIn, ReservationIn
from holdfast.products.parking.services.lots import ParkingService
from holdfast.services.bookings import BookingService
from holdfast.services.catalog import CatalogService
from holdfast.services.challenges import Challenges
from tests.support.fake_table import FakeTableStore
from tests.unit.conftest import ManualClock, event_request
from tests.unit.test_created_ids import LOT, RESOURCE
from tests.unit.test_appointments import DAY
from tests.unit.test_parking import KEYS

WIDGET = "https://smartcaptcha.yandexcloud.net"


class _Solved:
    def verify(self, token, ip=None):
        return token == "solved"


def _offerings(always: bool, flagged: bool):
    """(what, view(), hold(token)) for an event, a service and a lot of one deployment."""
    store, clock = FakeTableStore(), ManualClock()
    rule = dict(always=always, widget_origin=WIDGET, site_key="site-key-1")
    bookings = BookingService(store, clock, lambda *_: None, challenges=Challenges(_Solved(), **rule))
    catalog = CatalogService(store, clock, 600, id_salt="rule-salt", challenges=Challenges(None, **rule))
    appointments = AppointmentService(store, clock, bookings, 600, id_salt="rule-salt")
    parking = ParkingService(store, clock, bookings, 600, lambda: KEYS, id_salt="rule-salt")

    event_id = catalog.create_event(event_request(capacity=5, captcha_required=flagged))["event_id"]
    room = appointments.create_resource(ResourceIn.model_validate(RESOURCE).command())["resource_id"]
    service = appointments.create_service(ServiceIn.model_validate({
        "name": "Yoga", "mode": "group", "capacity": 3, "duration_minutes": 60, "resource_ids": [room],
        "price": {"value": "700.00", "currency": "RUB"}, "captcha_required": flagged}).command())["service_id"]
    lot_id = parking.create_lot(LotIn.model_validate(LOT | {"captcha_required": flagged}).command())["lot_id"]

    def hold_service(token):
        slot = SlotBookingIn.model_validate({"starts_at": f"{DAY}T10:00:00+03:00", "resource_id": room})
        return appointments.book(service, "c", f"s-{token}", replace(HoldPlaces.of(slot), captcha_token=token))

    def hold_lot(token):
        body = {"vehicle_type": "REGULAR", "plate": "A123BC77", "from": f"{DAY}T10:00:00Z", "to": f"{DAY}T12:00:00Z"}
        return parking.reserve(lot_id, "c", f"l-{token}",
                               replace(ReservationIn.model_validate(body).command(), captcha_token=token))

    return [
        ("event", lambda: catalog.get_event(event_id),
         lambda token: bookings.create_booking(event_id, "c", f"e-{token}", HoldPlaces(quantity=1, captcha_token=token))),
        ("service", lambda: appointments.availability(service, DAY), hold_service),
        ("lot", lambda: parking.get_lot(lot_id), hold_lot),
    ], flagged


@pytest.mark.parametrize(("always", "flagged"), [(False, True), (True, False), (True, True), (False, False)],
                         ids=["offering-flag", "deployment-on", "both", "neither"])
def test_every_view_says_what_the_hold_demands(always, flagged):
    offerings, _ = _offerings(always, flagged=flagged)
    for what, view, hold in offerings:
        asks = always or flagged
        shown = view()
        assert shown.get("captcha_required", False) is asks, what
        if asks:
            assert shown["captcha_widget"] == {"script": f"{WIDGET}/captcha.js", "site_key": "site-key-1"}, what
            with pytest.raises(ChallengeRefused) as refused:
                hold(None)
            assert refused.value.code == "captcha_required", what
            assert hold("solved").booking, what
        else:
            assert "captcha_widget" not in shown, what
            assert hold(None).booking, what           # the view said nothing: no token needed


def test_a_deployment_that_names_no_widget_still_says_a_challenge_is_needed():
    """Without CaptchaWidgetOrigin the view cannot say where the widget is, but still says that
    holds need a token: a page then shows the hold's own captcha_required refusal."""
    rule = Challenges(None, always=True)
    assert rule.view({"event_id": "e"}) == {"captcha_required": True}
    assert Challenges(None).view({"event_id": "e"}) == {}
    assert Challenges(None).view({"event_id": "e", "captcha_required": True}) == {"captcha_required": True}
