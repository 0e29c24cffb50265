"""Catalog listing and text search as DynamoDB access patterns (no scans).

A published event is copied into a handful of small index items, each a partition that one
request can ``Query`` with the date range as the sort key condition:

  pk                                 sk                        serves
  LIST#ALL                           <starts_at>#<event_id>    no filter
  LIST#CITY#<city>                   <starts_at>#<event_id>    ?city=
  LIST#CAT#<category>                <starts_at>#<event_id>    ?category=
  LIST#CITY#<city>#CAT#<category>    <starts_at>#<event_id>    ?city=&category=
  WORD#<token>                       <starts_at>#<event_id>    ?q= (first token; the rest filtered)

Tokens are the case-folded words of the name and venue (Unicode-aware, so Cyrillic works;
``ё`` is folded to ``е`` the way Russian readers expect).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime

MAX_TOKENS = 20
MIN_TOKEN_LENGTH = 2
#: The most UTF-8 bytes one normalised city, category or word may take in a key. NFKC can turn
#: one character into 18 (U+FDFA), so a length limit on the raw text does not bound the key;
#: with two such parts and the prefixes a partition key stays far below DynamoDB's 2,048 bytes.
MAX_KEY_PART_BYTES = 512
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class EventSearch:
    """What ``GET /events`` asks: a city, a category, words of the name or venue, a start-time
    range (from now on unless given), and a page of ``limit`` from ``cursor``."""

    city: str | None = None
    category: str | None = None
    q: str | None = None
    date_from: datetime | None = None
    date_to: datetime | None = None
    limit: int = 20
    cursor: str | None = None


def normalise(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return folded.replace("ё", "е")


def fits_key(text: str) -> bool:
    """Whether ``text``, normalised, is short enough to be part of an index key."""
    return len(normalise(text).encode()) <= MAX_KEY_PART_BYTES


def words_fit(text: str) -> bool:
    """Whether every word of ``text``, normalised, is short enough to be a key (``q`` reads one
    word's partition; a long text of short words is fine)."""
    return all(len(word.encode()) <= MAX_KEY_PART_BYTES for word in _WORD.findall(normalise(text)))


def tokens(*texts: str) -> list[str]:
    """The distinct searchable words of ``texts``, in order of first appearance, at most MAX_TOKENS.
    A word too long for a key (MAX_KEY_PART_BYTES) is not searchable."""
    seen: list[str] = []
    for text in texts:
        for word in _WORD.findall(normalise(text or "")):
            word = word.strip("_")
            if MIN_TOKEN_LENGTH <= len(word) and len(word.encode()) <= MAX_KEY_PART_BYTES and word not in seen:
                seen.append(word)
    return seen[:MAX_TOKENS]


def list_partition(city: str | None, category: str | None) -> str:
    if city and category:
        return f"LIST#CITY#{normalise(city)}#CAT#{normalise(category)}"
    if city:
        return f"LIST#CITY#{normalise(city)}"
    if category:
        return f"LIST#CAT#{normalise(category)}"
    return "LIST#ALL"


def index_partitions(event: dict) -> list[str]:
    """Every index partition a published event appears in."""
    city, category = event["city"], event["category"]
    parts = [list_partition(None, None), list_partition(city, None), list_partition(None, category),
             list_partition(city, category)]
    parts.extend(f"WORD#{token}" for token in tokens(event["name"], event["venue"]))
    return parts


def sort_key(event: dict) -> str:
    return f"{event['starts_at']}#{event['event_id']}"


# Shelves: offerings listed by name rather than by start time (a product's services, its lots),
# each shelf a prefix of its own so that no shelf's partitions meet another's or the events':
#
#   <shelf>#ALL                N#<name>\x01<id>    no filter
#   <shelf>#CITY#<city>        N#<name>\x01<id>    ?city=
#   <shelf>#WORD#<token>       N#<name>\x01<id>    ?q= (first token; the rest and the city filtered)
#
#: Every name key of a shelf sorts between these two ("$" follows "#").
NAME_KEYS = ("N#", "N$")
#: The UTF-8 bytes of a normalised name that go into its sort key: enough to order a shelf by
#: name, far below the key's 1,024 (the id after it keeps two equal prefixes apart).
NAME_KEY_BYTES = 200


def shelf_partition(shelf: str, city: str | None = None, word: str | None = None) -> str:
    if word:
        return f"{shelf}#WORD#{word}"
    return f"{shelf}#CITY#{normalise(city)}" if city else f"{shelf}#ALL"


def shelf_partitions(shelf: str, city: str, *texts: str) -> list[str]:
    """Every partition of ``shelf`` an offering in ``city`` whose words are ``texts`` is listed in."""
    parts = [shelf_partition(shelf)] + ([shelf_partition(shelf, city)] if city else [])
    return parts + [shelf_partition(shelf, word=token) for token in tokens(*texts)]


#: Between the name and the id: below every character a name keeps (control characters become
#: spaces), so that a name sorts before the longer names it begins ("Arbat" before "Arbat North").
_NAME_END = "\x01"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def name_sort_key(name: str, offering_id: str) -> str:
    cut = _CONTROL.sub(" ", normalise(name)).encode()[:NAME_KEY_BYTES].decode(errors="ignore")
    return f"{NAME_KEYS[0]}{cut}{_NAME_END}{offering_id}"
