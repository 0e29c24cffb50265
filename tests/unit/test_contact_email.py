"""One rule for a contact address on every route (issue 28, finding 8): a reservation's
``contact_email`` was any string up to 254 characters, so "not an address" was stored with a 201
and every notification for it ended in the dead-letter queue on AWS (SES refuses it)."""
from __future__ import annotations

import importlib
import typing

import pytest
from pydantic import BaseModel, ValidationError

from holdfast import schemas

REQUEST_MODULES = ("holdfast.schemas", "holdfast.products.appointments.schemas", "holdfast.products.parking.schemas",
                   "holdfast.products.parking.gate_sync_schemas")


def _models() -> list[type[BaseModel]]:
    found = []
    for name in REQUEST_MODULES:
        module = importlib.import_module(name)
        found += [value for value in vars(module).values() if isinstance(value, type)
                  and issubclass(value, BaseModel) and value.__module__ == name]
    return found


def _email_fields() -> list[tuple[type[BaseModel], str]]:
    return [(model, field) for model in _models() for field in model.model_fields if "email" in field.lower()]


def _validators(annotation) -> list:
    """Every metadata item of an annotation, through Optional/Union and Annotated."""
    found = list(getattr(annotation, "__metadata__", ()))
    for arg in typing.get_args(annotation):
        found += _validators(arg)
    return found


def test_the_request_models_that_take_an_address_are_found():
    # the scan below proves nothing if it finds nothing
    names = {f"{model.__name__}.{field}" for model, field in _email_fields()}
    assert {"BookingIn.contact_email", "WaitlistIn.contact_email", "SlotBookingIn.contact_email",
            "ReservationIn.contact_email"} <= names


@pytest.mark.parametrize("model,field", _email_fields(), ids=lambda v: getattr(v, "__name__", v))
def test_every_address_field_uses_the_one_validator(model, field):
    annotation = model.model_fields[field].rebuild_annotation()
    validators = [getattr(item, "func", None) for item in _validators(annotation)]
    assert schemas._email in validators, f"{model.__name__}.{field} is not a ContactEmail"


@pytest.mark.parametrize("bad", ["not an address", "name@", "@example.com", "a@b", "a b@example.com",
                                 "x" * 250 + "@example.com", "a@exa mple.com"])
def test_a_reservation_refuses_what_is_not_an_address(bad):
    from holdfast.products.parking.schemas import ReservationIn

    body = {"vehicle_type": "REGULAR", "plate": "A123BC77", "from": "2031-06-01T10:00:00Z",
            "to": "2031-06-01T11:00:00Z", "contact_email": bad}
    with pytest.raises(ValidationError) as raised:
        ReservationIn.model_validate(body)
    assert [error["loc"] for error in raised.value.errors()] == [("contact_email",)]


def test_a_reservation_keeps_an_address_as_the_other_routes_do():
    from holdfast.products.parking.schemas import ReservationIn

    body = {"vehicle_type": "REGULAR", "plate": "A123BC77", "from": "2031-06-01T10:00:00Z",
            "to": "2031-06-01T11:00:00Z", "contact_email": "Anna.K@Example.COM"}
    assert ReservationIn.model_validate(body).contact_email == "Anna.K@example.com"
    assert schemas.BookingIn.model_validate({"quantity": 1, "contact_email": "Anna.K@Example.COM"}
                                            ).contact_email == "Anna.K@example.com"
    assert ReservationIn.model_validate({k: v for k, v in body.items() if k != "contact_email"}).contact_email is None


def test_a_request_cannot_say_its_address_is_the_identitys_own():
    """Issue 35: ``contact_own`` comes from the verified identity (``mail_policy.addressed``),
    never from a body: a request that sends it gets a command without it."""
    from holdfast.domain.commands import HoldPlaces
    from holdfast.services.mail_policy import addressed

    admitted = []

    class Gate:
        def admit_address(self, customer_id, address):
            admitted.append((customer_id, address))

    def gate():
        return Gate()

    command = HoldPlaces.of({"quantity": 1, "contact_email": "a@example.org", "contact_own": True})
    assert command.contact_own is False and "contact_own" not in command.details
    assert addressed(command, None, gate, "c-1").contact_own is False
    assert addressed(command, "other@example.org", gate, "c-1").contact_own is False
    assert admitted == [("c-1", "a@example.org")] * 2          # another address: within the customer's caps
    assert addressed(command, "A@Example.org", gate, "c-1").contact_own is True
    assert addressed(HoldPlaces(quantity=1), "me@example.org", gate, "c-1") == HoldPlaces(
        quantity=1, contact_email="me@example.org", contact_own=True)
    assert len(admitted) == 2
