"""`holdfast.tools.cli adopt-unowned` (holdfast/tools/organizer_adoption.py): objects written before organizers
existed answer 404 to every organizer until adopted; adoption never takes another's object and a
second run writes nothing."""
from __future__ import annotations

import pytest

from holdfast.adapters.organizers_store import OrganizerStore
from holdfast.products.appointments.schemas import ResourceIn
from holdfast.domain.errors import NotFound
from holdfast.tools.organizer_adoption import adopt
from holdfast.products.parking.schemas import LotIn
from holdfast.products.appointments.services import AppointmentService
from holdfast.services.listing import ListingService
from holdfast.services.organizers import OrganizerService
from tests.unit.conftest import event_request
from tests.unit.test_parking import SPACES, parking, view_bookings  # noqa: F401 - fixtures


def test_unowned_objects_are_adopted_once_and_owned_ones_are_left_alone(catalog, parking, store, clock,  # noqa: F811
                                                                        bookings):
    organizers = OrganizerService(OrganizerStore(store.table, store.client), clock, lambda: b"adoption-hash-key-01")
    legacy = catalog.create_event(event_request())                         # before organizers: no owner
    lot = parking.create_lot(LotIn.model_validate({"name": "Old lot", "spaces": SPACES, "tariff": {
        "hourly": {"value": "100.00", "currency": "RUB"}}}).command())
    gate = parking.create_gate(lot["lot_id"], "Old gate")
    room = AppointmentService(store, clock, bookings, 600, "tests-deployment-salt").create_resource(ResourceIn.model_validate(
        {"name": "Old hall", "timezone": "Europe/Moscow", "opening_hours": {"open": "09:00", "close": "21:00"}}
    ).command())
    acme = organizers.authenticate(organizers.create("Acme", api_key="acme-key-0123456789")["api_key"])
    other = organizers.authenticate(organizers.create("Other", api_key="other-key-0123456789")["api_key"])
    theirs = catalog.create_event(event_request(name="Theirs"), None, other)
    listing = ListingService(store, clock)
    with pytest.raises(NotFound):
        listing.publish(legacy["event_id"], acme)
    with pytest.raises(ValueError):
        adopt(store.client, store.table, "no-such-organizer")

    done = adopt(store.client, store.table, acme.organizer_id, page_size=5)
    assert done.adopted == 4 and done.next_start is None      # event, lot, gate, resource
    assert listing.publish(legacy["event_id"], acme)["published"] is True
    assert parking.lot(lot["lot_id"], acme)["organizer_id"] == acme.organizer_id
    assert store.get_gate(lot["lot_id"], gate["gate_id"])["organizer_id"] == acme.organizer_id
    assert store.get_resource(room["resource_id"])["organizer_id"] == acme.organizer_id
    assert {s["event_id"] for s in catalog.sales(acme)["offerings"]} == {legacy["event_id"], lot["lot_id"]}
    assert store.get_event(theirs["event_id"])["organizer_id"] == other.organizer_id
    assert adopt(store.client, store.table, other.organizer_id).adopted == 0      # a second run: nothing left


def test_the_cli_command_adopts_and_refuses_an_unknown_organizer(catalog, store, clock, capsys):
    from holdfast.tools import cli

    organizers = OrganizerService(OrganizerStore(store.table, store.client), clock, lambda: b"adoption-hash-key-01")
    made = organizers.create("Acme")
    catalog.create_event(event_request())
    command = ["adopt-unowned", "--table", store.table, "--endpoint", ""]
    assert cli.main([*command[:1], "nobody", *command[1:]], clients=lambda service, endpoint: store.client) == 1
    assert cli.main([*command[:1], made["organizer_id"], *command[1:]],
                    clients=lambda service, endpoint: store.client) == 0
    assert f"1 objects adopted by {made['organizer_id']}" in capsys.readouterr().out


def test_resources_without_their_index_entry_are_listed_after_adoption_or_the_backfill(store, clock, bookings,
                                                                                        capsys):
    """A resource adopted, or one made with an owner before GET /resources had its index, is
    listed once its entry is written; the backfill writes each missing entry once."""
    from holdfast.tools import cli

    organizers = OrganizerService(OrganizerStore(store.table, store.client), clock, lambda: b"adoption-hash-key-01")
    acme = organizers.authenticate(organizers.create("Acme", api_key="acme-key-0123456789")["api_key"])
    service = AppointmentService(store, clock, bookings, 600, "tests-deployment-salt")
    hall = ResourceIn.model_validate({"name": "Old hall", "timezone": "Europe/Moscow",
                                      "opening_hours": {"open": "09:00", "close": "21:00"}})
    legacy = service.create_resource(hall.command())                       # before organizers: no owner
    older = service.create_resource(hall.model_copy(update={"name": "Older hall"}).command(), caller=acme)
    # as it was before the index: the owned resource's entry is missing
    store.client.delete_item(TableName=store.table, Key={"pk": {"S": f"OWNER#{acme.organizer_id}"},
                                                          "sk": {"S": f"RESOURCE#{older['resource_id']}"}})
    listed = lambda: {r["resource_id"] for r in store.owned_resources(acme.organizer_id)}  # noqa: E731
    assert listed() == set()
    assert adopt(store.client, store.table, acme.organizer_id).adopted == 1
    assert listed() == {legacy["resource_id"]}                  # adoption wrote the adopted one's entry
    command = ["backfill-owner-index", "--table", store.table, "--endpoint", "", "--page-size", "3"]
    assert cli.main(command, clients=lambda service, endpoint: store.client) == 0
    assert "1 index entries written, 1 present" in capsys.readouterr().out
    assert listed() == {legacy["resource_id"], older["resource_id"]}
    assert cli.main(command, clients=lambda service, endpoint: store.client) == 0
    assert "0 index entries written, 2 present" in capsys.readouterr().out
