"""Discount and access codes of an offering (issue 45): the organizer makes, lists and ends them;
a hold that names one has it checked here and takes its uses as claims (domain/codes.py) in its
own transaction (services/bookings.py)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

from ..clock import iso, parse_iso
from ..domain import pricing
from ..domain.codes import TRIES_PER_MINUTE, Code, InvalidCode, code_claims, comp_claims, code_of, normalise, with_uses
from ..domain.inventory import Places
from ..domain.errors import BookingError, Conflict, InvalidRequest, NotFound
from ..domain.money import Money
from ..domain.organizers import Caller, require_owner
from ..ports import Clock, CodeStore, ItemExists

#: What a code answer shows of what is stored.
SHOWN = ("code", "kind", "max_uses", "per_customer", "valid_from", "valid_to", "price_categories", "ticket_types", "zones",
         "created_at", "ended_at", "uses")


class TooManyCodeTries(BookingError):
    status = 429
    code = "too_many_code_tries"

    def __init__(self) -> None:
        super().__init__(f"At most {TRIES_PER_MINUTE} codes a minute; try again in a minute.", retry_after=60)


@dataclass(frozen=True)
class CodeUse:
    """A code a hold uses: the code and the counts its use takes."""

    code: Code
    claims: tuple[tuple[str, int], ...]


class CodeService:
    def __init__(self, store: CodeStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    # ------------------------------------------------------------------------------ organizer
    def create(self, offering_id: str, body: Mapping[str, Any], caller: Caller | None) -> dict[str, Any]:
        offering = self._owned(offering_id, caller)
        code = normalise(body.get("code"))
        if not code:
            raise InvalidRequest("A code is 3 to 32 letters, digits, '-' or '_'.", code="invalid_code_format")
        item: dict[str, Any] = {"code": code, "kind": body["kind"], "created_at": iso(self.clock())}
        form = body["kind"]
        value = body.get("value")
        if form == "percent":
            # 100: a comp code, whose orders cost nothing and are confirmed without a payment
            if value is None or isinstance(value, dict) or not 0 < Decimal(str(value)) <= 100:
                raise InvalidRequest("A percent code's value is a number above 0, at most 100.",
                                     code="invalid_code_value")
            item["value"] = str(Decimal(str(value)))
        elif form == "fixed":
            if not isinstance(value, dict):
                raise InvalidRequest("A fixed code's value is an amount {\"value\", \"currency\"}.",
                                     code="invalid_code_value")
            amount = Money.parse(value.get("value"), value.get("currency"))
            if amount.currency != offering.get("currency"):
                raise InvalidRequest("A fixed code's amount is in the offering's currency.", code="currency_mismatch")
            item["value"] = amount.text
        elif value is not None:
            raise InvalidRequest("An access code takes nothing off: it has no value.", code="invalid_code_value")
        for key in ("max_uses", "per_customer", "price_categories", "ticket_types", "zones"):
            if body.get(key) is not None:
                item[key] = body[key]
        for key in ("valid_from", "valid_to"):
            if body.get(key) is not None:
                item[key] = iso(parse_iso(str(body[key])))
        if item.get("valid_from") and item.get("valid_to") and \
                parse_iso(item["valid_to"]) <= parse_iso(item["valid_from"]):
            raise InvalidRequest("valid_to is after valid_from.", code="invalid_code_window")
        if form == "access" and not (item.get("ticket_types") or item.get("zones")):
            raise InvalidRequest("An access code names the hidden ticket types or zones it unlocks.",
                                 code="invalid_code_value")
        try:
            self.store.put_code(offering_id, item)
        except ItemExists:
            raise Conflict(f"The offering has a code {code} already (codes are never made twice).",
                           code="code_exists") from None
        return shown({**item, "uses": 0}, offering.get("currency"))

    def list(self, offering_id: str, caller: Caller | None) -> dict[str, Any]:
        offering = self._owned(offering_id, caller)
        codes = sorted(self.store.list_codes(offering_id), key=lambda item: item["code"])
        return {"codes": [shown(item, offering.get("currency")) for item in codes]}

    def end(self, offering_id: str, code: str, caller: Caller | None) -> dict[str, Any]:
        offering = self._owned(offering_id, caller)
        name = normalise(code)
        if not name or not self.store.end_code(offering_id, name, iso(self.clock())):
            raise NotFound(f"No code {code}.", code="code_not_found")
        found = next(item for item in self.store.list_codes(offering_id) if item["code"] == name)
        return shown(found, offering.get("currency"))

    def _owned(self, offering_id: str, caller: Caller | None) -> dict[str, Any]:
        return require_owner(self.store.get_event(offering_id), caller,
                             NotFound(f"No offering {offering_id}.", code="event_not_found"))

    # ---------------------------------------------------------------------------------- holds
    def code_for(self, offering_id: str, currency: str, text: Any, customer_id: str) -> Code:
        """The code a hold names, counted as one of the customer's tries this minute; every code
        that cannot be used now is the one ``invalid_code``."""
        now = self.clock()
        if not self.store.count_code_try(customer_id, now.strftime("%Y-%m-%dT%H:%M"), TRIES_PER_MINUTE,
                                         int(now.timestamp())):
            raise TooManyCodeTries()
        name = normalise(text)
        item = self.store.get_code(offering_id, name) if name else None
        if item is None:
            raise InvalidCode()
        code = code_of(item, currency)
        if not code.usable(now):
            raise InvalidCode()
        if code.per_customer:
            self.store.ensure_allowance(offering_id, code.code, customer_id, code.per_customer)
        return code

    def comped(self, offering_id: str, places: Places) -> Places:
        """Places that cost nothing, with the count they take from the offering's comps."""
        self.store.ensure_comps(offering_id)
        return with_uses(places, comp_claims(places))

    def comps_given(self, offering_id: str) -> int:
        return self.store.comps_given(offering_id)

    @staticmethod
    def use(code: Code, customer_id: str, details: Mapping[str, Any] | None) -> CodeUse:
        """The use of ``code`` by a hold of these details (its priced lines), or invalid_code
        when the code is not for every place asked."""
        if not code.applies((details or {}).get("priced") or ()):
            raise InvalidCode()
        return CodeUse(code, code_claims(code, customer_id))


def apply_code(event: Any, wanted: Mapping[str, Any], places: Places, amount: Money,
               details: Mapping[str, Any] | None, code: Code | None, customer_id: str
               ) -> tuple[Places, Money, dict[str, Any] | None]:
    """A hold's places, amount and details with its code (or none): a hidden ticket type or zone
    asked for is sold only with an access code that names it (400 ``not_on_sale`` without a code,
    ``invalid_code`` with another); a code's uses join the places as claims and its discount
    the amount, the booking keeping the code and the amount before it."""
    hidden = pricing.hidden_asked(event, wanted.get("zone"), (details or {}).get("priced") or ())
    if hidden and not (code is not None and all(code.unlocks(entry) for entry in hidden)):
        if code is not None:
            raise InvalidCode()
        raise InvalidRequest("Not on sale.", code="not_on_sale", hidden=[name for _, name in sorted(hidden)])
    if code is None:
        return places, amount, dict(details) if details is not None else None
    use = CodeService.use(code, customer_id, details)
    return (with_uses(places, use.claims), code.discounted(amount, places.quantity),
            {**(details or {}), "code": code.code, "full_amount": amount.text})


def shown(item: Mapping[str, Any], currency: Any) -> dict[str, Any]:
    answer = {key: item[key] for key in SHOWN if item.get(key) is not None}
    if item.get("value") is not None:
        answer["value"] = {"value": item["value"], "currency": currency} if item["kind"] == "fixed" \
            else float(Decimal(str(item["value"])))
    answer["active"] = not item.get("ended_at")
    return answer
