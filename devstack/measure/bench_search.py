"""The catalog's text search on DynamoDB Local, over a generated catalog (issue 35, goal 4).

    python -m devstack.measure.bench_search [--events 10000] [--repeat 15]

Generates ``--events`` published events (names, venues, cities and categories drawn from Russian
and English words, dates over a year; seeded, so every run builds the same catalog), writes each
one's index items exactly as publishing does (``ListingService.index_items``) into a table made
from template.yaml's key schema, then runs a fixed set of searches through
``ListingService.list_events`` and prints, for each: the DynamoDB requests one search made (and
that they were all Query), the items those requests read (ScannedCount), the results, and the
median wall-clock time of ``--repeat`` runs (loopback HTTP to DynamoDB Local included).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from typing import Any

from devstack.dynamodb_local import DynamoDBLocal

TABLE = "bench-search"
NOW = datetime(2030, 1, 1, tzinfo=timezone.utc)

_NAMES_RU = ["Квартет", "Оркестр", "Концерт", "Вечер", "Трио", "Балет", "Спектакль", "Щелкунчик", "Фестиваль",
             "Лебединое", "Органный", "Джазовый", "Камерный", "Хор", "Опера", "Мастер-класс", "Лекция", "Стендап"]
_NAMES_RU_2 = ["Бородина", "Чайковского", "Рахманинова", "Шостаковича", "Баха", "Моцарта", "огней", "романса",
               "весны", "классики", "джаза", "блюза", "озеро", "поэзии", "юмора", "Прокофьева"]
_NAMES_EN = ["Quartet", "Orchestra", "Concert", "Night", "Trio", "Ballet", "Jazz", "Blues", "Festival", "Comedy",
             "Symphony", "Recital", "Choir", "Opera", "Workshop", "Lecture", "Standup", "Session"]
_NAMES_EN_2 = ["Live", "Unplugged", "Classics", "Legends", "Evening", "Tour", "Stories", "Nights", "Premiere",
               "Gala", "Sessions", "Hits"]
_VENUES = ["Большой зал консерватории", "Дом музыки", "Crocus City Hall", "Зал Зарядье", "Blue Note Club",
           "Театр оперы и балета", "Филармония", "Arena Hall", "Клуб 16 тонн", "Art Space", "Дворец культуры",
           "Концертный зал Чайковского", "Main Stage", "Летний театр"]
_CITIES = ["Москва", "Санкт-Петербург", "Казань", "Новосибирск", "Екатеринбург", "Нижний Новгород", "Самара",
           "Краснодар", "Kazan", "Moscow", "Сочи", "Пермь", "Воронеж", "Тула", "Хабаровск", "Владивосток"]
_CATEGORIES = ["Концерт", "Театр", "Балет", "Джаз", "Классика", "Комедия", "Лекция", "Фестиваль", "rock", "jazz",
               "classical", "comedy"]

#: (label, what is typed): prefixes in both alphabets, spellings of the other alphabet, typos,
#: several words, a venue, a city and a category, and a word nobody used.
SEARCHES = [
    ("prefix ru", "квар"), ("prefix en", "quar"), ("word ru", "квартет"), ("ru typed in Latin", "kvartet"),
    ("en typed in Cyrillic", "симфони"), ("typo (changed)", "kvartit"), ("typo (swapped)", "щелкнучик"),
    ("typo (missing)", "rahmaninv"), ("two words", "квартет бородина"), ("venue", "консерватории"),
    ("city", "хабаровск"), ("category", "classical"), ("common prefix", "ко"), ("nothing", "zzyzx"),
]


def generate(count: int, seed: int = 35) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    events = []
    for n in range(count):
        if rng.random() < 0.6:
            name = f"{rng.choice(_NAMES_RU)} {rng.choice(_NAMES_RU_2)}"
        else:
            name = f"{rng.choice(_NAMES_EN)} {rng.choice(_NAMES_EN_2)}"
        starts = NOW + timedelta(days=rng.randint(1, 365), minutes=30 * rng.randint(0, 47))
        events.append({
            "event_id": f"bench-{n:05d}", "name": name, "venue": rng.choice(_VENUES), "city": rng.choice(_CITIES),
            "category": rng.choice(_CATEGORIES), "starts_at": starts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "price": "1500.00", "currency": "RUB", "inventory_kind": "counted", "published": True,
        })
    return events


def load(client: Any, events: list[dict[str, Any]], threads: int = 4) -> int:
    """Write every event's index items (as publishing writes them); how many items."""
    from holdfast.adapters.codec import _attrs
    from holdfast.services.listing import ListingService

    items = [item for event in events for item in ListingService.index_items(event)]
    batches = [items[at:at + 25] for at in range(0, len(items), 25)]

    def write(batch: list[dict[str, Any]]) -> None:
        requests = {TABLE: [{"PutRequest": {"Item": _attrs(item)}} for item in batch]}
        while requests:
            requests = client.batch_write_item(RequestItems=requests).get("UnprocessedItems") or {}

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(write, batches))
    return len(items)


class Counted:
    """The client, with every request it makes and the items its Queries read."""

    def __init__(self, client: Any) -> None:
        self.client, self.calls, self.read = client, [], 0

    def __getattr__(self, name: str) -> Any:
        call = getattr(self.client, name)
        if not callable(call):
            return call

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            answer = call(*args, **kwargs)
            self.read += int(answer.get("ScannedCount", 0)) if isinstance(answer, dict) else 0
            return answer
        return counted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    sys.path[:0] = ["layers/holdfast"]
    from holdfast.adapters.dynamo import BookingStore
    from holdfast.schemas import EventListQuery
    from holdfast.services.listing import ListingService
    from tests.support.template import create_bookings_table

    with DynamoDBLocal() as ddb:
        client = ddb.client()
        create_bookings_table(client, TABLE)
        started = time.perf_counter()
        written = load(client, generate(args.events))
        print(f"catalog: {args.events} published events, {written} index items "
              f"({written / args.events:.1f} per event), written in {time.perf_counter() - started:.0f} s")
        store = BookingStore(TABLE, client)
        listing = ListingService(store, lambda: NOW)
        print(f"{'search':24} {'q':20} {'requests':>8} {'items read':>10} {'found':>6} {'median ms':>9}")
        rows = []
        for label, text in SEARCHES:
            query = EventListQuery.model_validate({"q": text, "limit": 20}).search()
            counted = Counted(client)
            store.client = counted
            answer = listing.list_events(query)
            store.client = client
            if set(counted.calls) - {"query"}:
                raise SystemExit(f"{label}: a search made {counted.calls}")
            times = []
            for _ in range(args.repeat):
                begun = time.perf_counter()
                listing.list_events(query)
                times.append((time.perf_counter() - begun) * 1000)
            rows.append((len(counted.calls), counted.read, statistics.median(times)))
            print(f"{label:24} {text:20} {len(counted.calls):>8} {counted.read:>10} "
                  f"{len(answer['events']):>6}{'+' if answer['next_cursor'] else ' '} {statistics.median(times):>9.1f}")
        print(f"all searches: at most {max(r[0] for r in rows)} Query requests each, no Scan; items read median "
              f"{statistics.median(r[1] for r in rows):.0f} (max {max(r[1] for r in rows)}); latency median "
              f"{statistics.median(r[2] for r in rows):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
