"""The store's attribute codec (adapters/codec.py ``_ser``, ``_plain``) answers the common types by
their exact type and hands the rest to boto3's TypeSerializer and TypeDeserializer: its output must
be boto3's, to the byte, for every value an item may hold, and refuse what boto3 refuses."""
from __future__ import annotations

import enum
import random
from decimal import Decimal

import pytest
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer

from holdfast.adapters.codec import _attrs, _des, _plain, _ser


class Colour(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


SAMPLES = [
    "", "text", "ünïcode ✓", 0, -1, 10**30, Decimal("1.50"), Decimal("-0.001"), Decimal("1E+3"), True, False, None,
    [], (), {}, [1, "a", None, True], ("x", Decimal("2")), {"a": {"b": [{"c": None}]}, "n": 3},
    {"S", "T"}, {1, Decimal("2.5")}, b"raw", bytearray(b"raw"), Binary(b"bin"), {b"a", b"b"},
    Colour.RED, Level.HIGH, [Colour.RED, {"k": Level.HIGH}],
]


def _random_value(rng: random.Random, depth: int = 0):
    choice = rng.randrange(9 if depth < 3 else 6)
    if choice == 0:
        return rng.choice(["", "a", "POOL#003", "ё"]) + str(rng.randrange(1000))
    if choice == 1:
        return rng.randrange(-10**6, 10**6)
    if choice == 2:
        return Decimal(rng.randrange(-10**6, 10**6)) / 100
    if choice == 3:
        return rng.random() < 0.5
    if choice == 4:
        return None
    if choice == 5:
        return {f"s{rng.randrange(9)}" for _ in range(rng.randrange(1, 4))}
    if choice == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if choice == 7:
        return tuple(_random_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    return {f"k{n}": _random_value(rng, depth + 1) for n in range(rng.randrange(5))}


@pytest.mark.parametrize("value", SAMPLES, ids=[f"sample{n}" for n in range(len(SAMPLES))])
def test_each_value_is_written_as_boto3_writes_it_and_read_back_as_boto3_reads_it(value):
    expected = TypeSerializer().serialize(value)
    assert _ser(value) == expected
    assert repr(_ser(value)) == repr(expected)   # the same types inside, Decimal strings included
    assert repr(_des(expected)) == repr(TypeDeserializer().deserialize(expected))


def test_random_items_round_trip_exactly_as_through_boto3():
    rng = random.Random(49)
    for _ in range(500):
        item = {f"a{n}": _random_value(rng) for n in range(rng.randrange(1, 8))}
        written = _attrs(item)
        assert repr(written) == repr({k: TypeSerializer().serialize(v) for k, v in item.items()})
        assert repr(_plain(written)) == repr({k: TypeDeserializer().deserialize(v) for k, v in written.items()})


@pytest.mark.parametrize("value", [1.5, Decimal("NaN"), Decimal("Infinity"), object(), [1, 2.5], {"k": float("inf")}],
                         ids=["float", "nan", "infinity", "object", "list-with-float", "map-with-inf"])
def test_what_boto3_refuses_is_refused_alike(value):
    with pytest.raises(TypeError) as ours:
        _ser(value)
    with pytest.raises(TypeError) as boto3s:
        TypeSerializer().serialize(value)
    assert str(ours.value) == str(boto3s.value)


@pytest.mark.parametrize("value", [{}, {"X": "?"}], ids=["no-type", "unknown-type"])
def test_an_unknown_attribute_type_is_refused_alike(value):
    with pytest.raises(TypeError) as ours:
        _des(value)
    with pytest.raises(TypeError) as boto3s:
        TypeDeserializer().deserialize(value)
    assert str(ours.value) == str(boto3s.value)
