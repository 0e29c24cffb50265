"""config.load_settings: the function's environment checked at the cold start, every problem named."""
from __future__ import annotations

import ipaddress

import pytest

from holdfast.config import ConfigurationError, load_settings

BASE = {"BOOKINGS_TABLE_NAME": "bookings"}


def test_values_are_converted_and_defaults_kept():
    settings = load_settings({**BASE, "PROVIDER_TIMEOUT_SECONDS": "2.5", "DEFAULT_HOLD_TTL_SECONDS": " 900 ",
                              "RECONCILE_SCHEDULE_SECONDS": "5, 10,,20", "ALLOWED_WEBHOOK_NETWORKS": "185.71.76.0/27, ::1"})
    assert settings.provider_timeout_seconds == 2.5 and settings.default_hold_ttl_seconds == 900
    assert settings.reconcile_schedule_seconds == (5, 10, 20)
    assert settings.allowed_webhook_networks == (ipaddress.ip_network("185.71.76.0/27"), ipaddress.ip_network("::1"))
    assert settings.queue_rate_burst == 30 and settings.customer_identity_source == "authorizer"
    assert settings.sweep_max_restarts == 5 and load_settings({**BASE, "SWEEP_MAX_RESTARTS": "3"}).sweep_max_restarts == 3


@pytest.mark.parametrize(("variable", "value"), [
    ("PROVIDER_TIMEOUT_SECONDS", "0"), ("PROVIDER_TIMEOUT_SECONDS", "61"), ("PROVIDER_TIMEOUT_SECONDS", "nan"),
    ("DEFAULT_HOLD_TTL_SECONDS", "ten"), ("DEFAULT_HOLD_TTL_SECONDS", "0"), ("ADMISSION_TOKEN_TTL_SECONDS", "9"),
    ("CUSTOMER_IDENTITY_SOURCE", "cookie"), ("HOLDFAST_DEPLOYMENT", "staging"), ("RESOLUTION_OPERATOR", ""),
    ("RECONCILE_SCHEDULE_SECONDS", "30,-1"), ("RECONCILE_SCHEDULE_SECONDS", ""), ("ALLOWED_WEBHOOK_NETWORKS", "nowhere"),
    ("BOOKING_RATE_BURST", "0"), ("BOOKINGS_TABLE_NAME", "ab"), ("SWEEP_MAX_RESTARTS", "0"),
])
def test_a_malformed_variable_is_named(variable, value):
    with pytest.raises(ConfigurationError, match=f"invalid function configuration: .*{variable}"):
        load_settings({**BASE, variable: value})


def test_every_problem_is_reported_at_once_and_the_table_is_required():
    with pytest.raises(ConfigurationError) as caught:
        load_settings({"QUEUE_RATE_BURST": "0"})
    assert "BOOKINGS_TABLE_NAME" in str(caught.value) and "QUEUE_RATE_BURST" in str(caught.value)


def test_settings_are_read_only():
    with pytest.raises(AttributeError):
        load_settings(BASE).bookings_table_name = "other"  # type: ignore[misc]
