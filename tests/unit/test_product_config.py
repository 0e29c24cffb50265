"""A product's own settings (config.section, config.setting): read from the environment and checked
like the core's, every problem named by its variable; parking's keep the variables the template sets."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from holdfast.config import ConfigurationError, check_sections, load_section, setting
from holdfast.products.parking.config import ParkingConfig


# a plain frozen dataclass, not a config.section: a section stays registered for the whole process
@dataclass(frozen=True)
class ShedConfig:
    name: str = setting("SHED_NAME", "garden", least=3)
    doors: int = setting("SHED_DOORS", 1, ge=1, le=4)
    tilt: float = setting("SHED_TILT", 0.0, ge=0)


def test_values_are_converted_and_defaults_kept():
    assert load_section(ShedConfig, {}) == ShedConfig("garden", 1, 0.0)
    read = load_section(ShedConfig, {"SHED_DOORS": " 3 ", "SHED_TILT": "2.5", "OTHER": "x"})
    assert (read.name, read.doors, read.tilt) == ("garden", 3, 2.5)
    with pytest.raises(AttributeError):
        read.doors = 2  # type: ignore[misc]


def test_every_problem_is_named_by_its_variable_at_once():
    with pytest.raises(ConfigurationError) as caught:
        load_section(ShedConfig, {"SHED_NAME": "ab", "SHED_DOORS": "five", "SHED_TILT": "nan"})
    message = str(caught.value)
    assert message.startswith("invalid function configuration: ")
    assert all(variable in message for variable in ("SHED_NAME", "SHED_DOORS", "SHED_TILT"))


def test_parking_reads_its_seed_name_and_clock_skew_from_the_template_variables():
    read = load_section(ParkingConfig, {"PARKING_KEY_SECRET_NAME": "holdfast/parking", "GATE_CLOCK_SKEW_SECONDS": "30"})
    assert (read.key_secret_name, read.gate_clock_skew_seconds) == ("holdfast/parking", 30)
    assert load_section(ParkingConfig, {}) == ParkingConfig("", 120)
    with pytest.raises(ConfigurationError, match="GATE_CLOCK_SKEW_SECONDS: Input should be less than or equal to"):
        load_section(ParkingConfig, {"GATE_CLOCK_SKEW_SECONDS": "86401"})


def test_the_cold_start_checks_every_section_imported():
    check_sections({"GATE_CLOCK_SKEW_SECONDS": "0"})
    with pytest.raises(ConfigurationError, match="GATE_CLOCK_SKEW_SECONDS"):
        check_sections({"GATE_CLOCK_SKEW_SECONDS": "-1"})


def test_doors_read_the_gates_clock_skew():
    from holdfast.products.events.config import EventsConfig

    assert load_section(EventsConfig, {}).door_clock_skew_seconds == 120
    assert load_section(EventsConfig, {"GATE_CLOCK_SKEW_SECONDS": "30"}).door_clock_skew_seconds == 30
