"""Signing keys of passes (issue 42, finding 12): a root per product, checking with public keys
only, key versions (``kid``) with a rotation, and passes that expire.

Before: one master seed derived every lot's and event's key, and the doors' and gates' function
held it (it derived the public halves from it), so a function that only checks passes could make
them; tokens never expired."""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from holdfast.domain.commands import HoldPlaces
from holdfast.domain.inventory import Move
from holdfast.domain.signatures import KeyNotPublished, PublicKeys, TokenInvalid, claimed, unb64
from holdfast.domain.statuses import BookingStatus
from holdfast.products.events import tickets
from holdfast.products.events.services.doors import Doors
from holdfast.products.events.tickets import VALID_AFTER_START, EventKeys
from holdfast.products.parking.tokens import LotKeys, verify as verify_pass
from holdfast.services import transitions
from holdfast.services.bookings import BookingService
from holdfast.services.catalog import CatalogService
from tests.correctness.helpers import ManualClock, event_request

OLD = EventKeys(b"unit-pass-keys-events-root-old-0123")
NEW_SEED = b"unit-pass-keys-events-root-new-0123"
LOTS = LotKeys(b"unit-pass-keys-parking-root-0123456")
START = "2030-02-01T20:00:00.000Z"
BEFORE = datetime(2030, 2, 1, 19, 0, tzinfo=timezone.utc)
DETAILS = {"plate": "A123BC77", "space_id": "R1", "from": "2030-02-01T10:00:00.000Z", "to": "2030-02-01T12:00:00.000Z"}


def public_only(*keys) -> PublicKeys:
    """What a checking function builds: the published list, no seed."""
    return PublicKeys.from_listing([entry["public_key"] for entry in keys[0].public_key()["keys"]]
                                   + [k.public_key()["public_key"] for k in keys[1:]])


def test_a_checking_function_holds_public_keys_and_can_make_no_pass():
    checker = public_only(OLD)
    token = OLD.ticket_token("ev-1", "bk-1", "tk-1", None, starts_at=START)
    assert checker.verify(token, BEFORE)["tk"] == "tk-1"
    assert not hasattr(checker, "sign") and not hasattr(checker, "private_key")
    assert checker.public_key()["keys"] == [{"kid": OLD.signing_kid, "public_key": OLD.public_key()["public_key"],
                                             "alg": "Ed25519"}]


def test_each_product_has_its_own_root_so_a_pass_never_opens_the_other_products_checkpoints():
    ticket = OLD.ticket_token("ev-1", "bk-1", "tk-1", None, starts_at=START)
    entry = LOTS.entry_token("lot-1", "bk-2", DETAILS)
    assert OLD.signing_kid != LOTS.signing_kid
    with pytest.raises(TokenInvalid) as refused:
        public_only(LOTS).verify(ticket)
    assert refused.value.reason == "token_unknown_key"
    with pytest.raises(TokenInvalid) as refused:
        tickets.check(entry, public_only(OLD), "lot-1")
    assert refused.value.reason == "bad_token"
    # one key per product, whatever the lot: the scope is in the signed payload
    with pytest.raises(TokenInvalid) as refused:
        verify_pass(entry, public_only(LOTS), "lot-2")
    assert refused.value.reason == "token_wrong_lot"


def test_a_rotation_lists_both_keys_then_retires_the_old_one():
    old_ticket = OLD.ticket_token("ev-1", "bk-1", "tk-1", None, starts_at=START)
    new_public = EventKeys(NEW_SEED).public_raw()
    # 1. the new key is published beside the old one: the old root still signs, both are accepted
    both = [OLD.public_raw(), new_public]
    assert EventKeys(b"unit-pass-keys-events-root-old-0123", both).signing_kid == OLD.signing_kid
    # 2. the new root signs, the new key listed first: both kinds of tickets pass the doors
    new = EventKeys(NEW_SEED, [new_public, OLD.public_raw()])
    new_ticket = new.ticket_token("ev-1", "bk-1", "tk-1", None, starts_at=START)
    assert claimed(new_ticket)["kid"] == new.signing_kid != OLD.signing_kid
    doors = PublicKeys([new_public, OLD.public_raw()])
    assert doors.public_key()["kid"] == new.signing_kid and len(doors.public_key()["keys"]) == 2
    assert doors.verify(old_ticket)["tk"] == doors.verify(new_ticket)["tk"] == "tk-1"
    # 3. the old key retired (its tickets expired): its tickets are refused by name
    with pytest.raises(TokenInvalid) as refused:
        PublicKeys([new_public]).verify(old_ticket)
    assert refused.value.reason == "token_unknown_key"
    # a root whose key is not published signs nothing (devices would refuse all it made)
    with pytest.raises(KeyNotPublished):
        EventKeys(NEW_SEED, [OLD.public_raw()])


def test_a_token_claiming_a_listed_kid_with_another_keys_signature_is_refused():
    forger = EventKeys(b"someone-elses-root-0123456789abcdef")
    token = forger.ticket_token("ev-1", "bk-1", "tk-1", None, starts_at=START)
    payload, signature = token.split(".")
    import base64
    import json

    body = json.loads(unb64(payload)) | {"kid": OLD.signing_kid}
    relabelled = base64.urlsafe_b64encode(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
                                          ).rstrip(b"=").decode() + "." + signature
    with pytest.raises(TokenInvalid) as refused:
        public_only(OLD).verify(relabelled)
    assert refused.value.reason == "token_signature_invalid"


def test_a_ticket_expires_after_its_events_start_and_an_entry_pass_at_its_windows_end():
    ticket = OLD.ticket_token("ev-1", "bk-1", "tk-1", None, starts_at=START)
    assert claimed(ticket)["exp"] == "2030-02-02T08:00:00.000Z"   # 20:00 + 12 h
    end = datetime(2030, 2, 1, 20, 0, tzinfo=timezone.utc) + VALID_AFTER_START
    keys = public_only(OLD)
    assert tickets.check(ticket, keys, "ev-1", end - timedelta(seconds=1))["tk"] == "tk-1"
    with pytest.raises(TokenInvalid) as refused:
        tickets.check(ticket, keys, "ev-1", end)
    assert refused.value.reason == "ticket_expired"
    entry = LOTS.entry_token("lot-1", "bk-2", DETAILS)
    assert claimed(entry)["exp"] == DETAILS["to"]
    with pytest.raises(TokenInvalid) as refused:
        verify_pass(entry, public_only(LOTS), "lot-1", datetime(2030, 2, 1, 12, 0, tzinfo=timezone.utc))
    assert refused.value.reason == "token_expired"


def test_a_booking_views_tickets_expiring_with_its_events_start_and_a_door_refuses_them_after(store):
    """The expiry is the event's start as the event says it when the ticket is signed
    (tests/unit/test_ticket_expiry.py for a postponed one), and the online door judges it at the
    scan's time."""
    clock = ManualClock(BEFORE)
    event_id = CatalogService(store, clock, 600, id_salt="tests").create_event(event_request(capacity=5))["event_id"]
    held = BookingService(store, clock, rng=random.Random(1)).create_booking(event_id, "c1", "k1", HoldPlaces(quantity=1))
    booking = transitions.apply(store, held.booking, clock(), status=BookingStatus.CONFIRMED, actor="test",
                                action="paid", decision="paid", move=Move.SELL)
    shown = tickets.view(booking, tickets.TicketSigner(lambda: OLD, store))["tickets"][0]
    assert claimed(shown["token"])["exp"] == "2030-02-02T08:00:00.000Z"
    doors = Doors(store, clock, lambda: public_only(OLD))
    door = doors.create_door(event_id, "Main")
    late = datetime(2030, 2, 2, 8, 0, tzinfo=timezone.utc)
    refused = doors.scan(event_id, door["door_id"], {"event_id": "p-1", "token": shown["token"]}, at=late, offline=False)
    assert refused["admitted"] is False and refused["reason"] == "ticket_expired"
    admitted = doors.scan(event_id, door["door_id"], {"event_id": "p-2", "token": shown["token"]},
                          at=late - timedelta(minutes=1), offline=False)
    assert admitted["admitted"] is True
    # the door's configuration hands its devices the public keys only
    assert door["keys"] == public_only(OLD).public_key()["keys"]
