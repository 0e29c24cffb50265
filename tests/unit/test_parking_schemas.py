"""A lot's tariff at the boundary: its daily cap is an amount like its hourly rate, {value, currency},
in the rate's currency; a bare number is refused with a code of its own."""
from __future__ import annotations

import pytest

from holdfast.domain.errors import InvalidRequest
from holdfast.products.parking.schemas import LotIn

HOURLY = {"value": "150.00", "currency": "RUB"}


def lot(**tariff):
    return {"name": "Central", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
            "tariff": {"hourly": HOURLY, "grace_minutes": 10} | tariff}


def refusal(body) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as refused:
        LotIn.model_validate(body)
    return refused.value


def test_a_daily_cap_object_is_stored_as_an_amount_in_the_lots_currency():
    settings = LotIn.model_validate(lot(daily_cap={"value": 1200, "currency": "rub"})).settings()
    assert (settings.hourly, settings.daily_cap) == ("150.00", "1200.00")
    assert LotIn.model_validate(lot()).settings().daily_cap is None


@pytest.mark.parametrize("bare", ["1200.00", 1200, 1200.5])
def test_a_bare_daily_cap_is_refused_with_a_code_naming_the_shape(bare):
    refused = refusal(lot(daily_cap=bare))
    assert (refused.status, refused.code, refused.details) == (400, "money_object_required", {"field": "daily_cap"})


def test_a_bare_hourly_rate_is_refused_the_same_way():
    refused = refusal(lot(hourly="150.00"))
    assert (refused.code, refused.details) == ("money_object_required", {"field": "hourly"})


def test_a_daily_cap_in_another_currency_is_refused():
    refused = refusal(lot(daily_cap={"value": "20.00", "currency": "EUR"}))
    assert (refused.status, refused.code, refused.details) == (400, "currency_mismatch",
                                                               {"field": "daily_cap", "currency": "RUB"})


@pytest.mark.parametrize("cap, code", [({"value": "12.345", "currency": "RUB"}, "invalid_amount"),
                                       ({"value": "0", "currency": "RUB"}, "invalid_amount"),
                                       ({"value": "10.00", "currency": "XXX"}, "invalid_currency")])
def test_a_daily_cap_object_is_checked_like_every_amount(cap, code):
    assert refusal(lot(daily_cap=cap)).code == code
