"""Catalog listing and text search as DynamoDB access patterns (no scans).

A published event is copied into a handful of small index items, each a partition that one
request can ``Query`` with the date range as the sort key condition:

  pk                                 sk                        serves
  LIST#ALL                           <starts_at>#<event_id>    no filter
  LIST#CITY#<city>                   <starts_at>#<event_id>    ?city=
  LIST#CAT#<category>                <starts_at>#<event_id>    ?category=
  LIST#CITY#<city>#CAT#<category>    <starts_at>#<event_id>    ?city=&category=
  FIND#F#<first two letters>         <word>\x01<word>\x01<order>   ?q= (see "Text search" below)
  FIND#R#<two letters at 2..5>       <word from there>\x01<word>\x01<order>

Tokens are the case-folded words of the name and venue (Unicode-aware, so Cyrillic works;
``ё`` is folded to ``е`` the way Russian readers expect).

Text search (``?q=``) matches prefixes, Russian and English spellings of one another, and one typo,
with at most two Query requests. Every word of the name, venue, city and category is reduced to a
Latin *skeleton* (``skeleton``: transliterated, then spellings that sound alike folded, so that
``Квартет``, ``kvartet`` and ``Quartet`` are all ``kvartet``), and each skeleton is written under
keys a single request can range over:

- ``F#`` + its first two letters, sorted by the skeleton: a prefix is one sort key range, and so is
  "same first three letters" (a typo at the fourth letter or later);
- ``R#`` + the two letters at each offset 2..5 (``ROTATIONS``), sorted by the skeleton from that
  offset: a typo in the first letters leaves the query's tail intact, found at its offset, one
  either side (an inserted or a missing letter moves it by one).

A query word of ``TYPO_MIN_LENGTH`` letters or more reads both (``find_reads``); a shorter one
reads its prefix only. What was read is checked in memory (``match``: the word itself, a prefix of
it, or one edit away from one) and ranked: whole words, then prefixes, then typos, then by date.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

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
    """Every listing partition a published event appears in (its text search keys: ``find_keys``)."""
    city, category = event["city"], event["category"]
    return [list_partition(None, None), list_partition(city, None), list_partition(None, category),
            list_partition(city, category)]


def sort_key(event: dict) -> str:
    return f"{event['starts_at']}#{event['event_id']}"


# ------------------------------------------------------------------------------ text search

#: Russian (and the Ukrainian and Belarusian letters a Russian catalog meets) to Latin, the way
#: people type names in Latin letters; ``_FOLDS`` then merges the spellings that schemes disagree on.
_CYRILLIC = dict(zip(
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєў",
    ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "i", "k", "l", "m", "n", "o", "p", "r", "s", "t",
     "u", "f", "kh", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya", "i", "i", "e", "u"]))
#: Applied in order to the transliterated word. Each pair spells one sound two ways (щ as shch or
#: sch, х as kh or h, ц as ts or c, й/ы/я/ю with y or i, English qu/w/x/ph, a hard or soft c), so
#: both sides of a search meet on one spelling; a skeleton is never shown, only compared.
_FOLDS = [(re.compile(pattern), to) for pattern, to in [
    ("shch|sch", "sh"), ("dzh", "j"), ("kh", "h"), ("ts|tz", "c"), ("ph", "f"), ("qu", "kv"), ("q", "k"),
    ("w", "v"), ("x", "ks"), ("y", "i"), ("ck", "k"), ("c(?=[ei])", "s"), ("c(?!h)", "k"),
    (r"(.)\1+", r"\1")]]
#: A query word this long may have one typo (shorter ones would match too much).
TYPO_MIN_LENGTH = 5
#: The offsets whose two letters key a word's ``R#`` items (see the module's docstring).
ROTATIONS = (2, 3, 4, 5)
#: The most words of one offering the search indexes: each costs up to 1 + len(ROTATIONS) items,
#: and a change of all of them drops and puts them in one transaction (at most 100 actions).
MAX_SEARCH_WORDS = 8
#: Longer skeletons are not indexed (a sort key holds one twice; nobody types 60 letters of one word).
MAX_SEARCH_WORD_LENGTH = 60
#: Above every character a skeleton holds: the end of a sort key range "starting with".
_TOP = "\U0010ffff"
_SEP = "\x01"


def skeleton(word: str) -> str:
    """``word`` (already a normalised token) as the Latin spelling search compares."""
    text = "".join(_CYRILLIC.get(char, char) for char in word)
    for pattern, to in _FOLDS:
        text = pattern.sub(to, text)
    return text


def search_words(*texts: str) -> list[str]:
    """The distinct skeletons of ``texts``' words, in order, at most MAX_SEARCH_WORDS."""
    found: list[str] = []
    for word in tokens(*texts):
        shape = skeleton(word)
        if MIN_TOKEN_LENGTH <= len(shape) <= MAX_SEARCH_WORD_LENGTH and shape not in found:
            found.append(shape)
    return found[:MAX_SEARCH_WORDS]


def find_keys(space: str, words: Iterable[str], order: str) -> list[tuple[str, str]]:
    """(pk, sk) of every search item of an offering whose skeletons are ``words``, under ``space``
    (``FIND`` for events, a shelf's own for its offerings); ``order`` ends each sort key (the
    event's date and id, an offering's name and id), so that equal words read in that order."""
    keys = []
    for word in words:
        keys.append((f"{space}#F#{word[:2]}", f"{word}{_SEP}{word}{_SEP}{order}"))
        keys.extend((f"{space}#R#{word[at:at + 2]}", f"{word[at:]}{_SEP}{word}{_SEP}{order}")
                    for at in ROTATIONS if len(word) >= at + 2)
    return keys


def find_reads(space: str, word: str) -> list[tuple[str, str, str]]:
    """(pk, lower, upper) of the one or two sort key ranges that hold every indexed word ``word``
    can match: a prefix; with TYPO_MIN_LENGTH letters or more, also one edit away."""
    if len(word) < TYPO_MIN_LENGTH:
        return [(f"{space}#F#{word[:2]}", word, word + _TOP)]
    # a typo at the fourth letter or later keeps the first three; one before keeps the tail after
    # the fourth (the third, for five letters), at its offset or one either side of it. (Five
    # letters with the third and fourth swapped break both: that one typo is not found.)
    tail = word[4:] if len(word) > TYPO_MIN_LENGTH else word[3:]
    return [(f"{space}#F#{word[:2]}", word[:3], word[:3] + _TOP),
            (f"{space}#R#{tail[:2]}", tail, tail + _TOP)]


def indexed_word(sort_key: str) -> str:
    """The word a search item stands for (the second part of its sort key)."""
    return sort_key.split(_SEP)[1]


#: ``match``'s answer for a word one edit away: every other kind ranks before it.
TYPO = 2


def match(query: str, word: str) -> int | None:
    """How well the query word ``query`` matches the indexed ``word``: 0 the word itself, 1 a
    prefix of it, 2 one edit (a letter changed, missing, added, or two swapped) from a prefix of
    it, None not at all. Both are skeletons."""
    if word == query:
        return 0
    if word.startswith(query):
        return 1
    if len(query) >= TYPO_MIN_LENGTH and any(_one_edit(query, word[:size]) for size in
                                             (len(query) - 1, len(query), len(query) + 1) if size <= len(word)):
        return TYPO
    return None


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one edit (optimal string alignment distance 1)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    start = 0
    while start < len(a) and a[start] == b[start]:
        start += 1
    if len(a) < len(b):
        return a[start:] == b[start + 1:]
    return (a[start + 1:] == b[start + 1:]
            or (a[start + 2:] == b[start + 2:] and a[start:start + 2] == b[start:start + 2][::-1]))


# Shelves: offerings listed by name rather than by start time (a product's services, its lots),
# each shelf a prefix of its own so that no shelf's partitions meet another's or the events':
#
#   <shelf>#ALL                N#<name>\x01<id>    no filter
#   <shelf>#CITY#<city>        N#<name>\x01<id>    ?city=
#   <shelf>#FIND#...           (as the events' FIND# items, ordered by name)   ?q=
#
#: Every name key of a shelf sorts between these two ("$" follows "#").
NAME_KEYS = ("N#", "N$")
#: The UTF-8 bytes of a normalised name that go into its sort key: enough to order a shelf by
#: name, far below the key's 1,024 (the id after it keeps two equal prefixes apart).
NAME_KEY_BYTES = 200


def shelf_partition(shelf: str, city: str | None = None) -> str:
    return f"{shelf}#CITY#{normalise(city)}" if city else f"{shelf}#ALL"


def shelf_partitions(shelf: str, city: str) -> list[str]:
    """Every listing partition of ``shelf`` an offering in ``city`` is in (its text search items:
    ``find_keys`` under ``<shelf>#FIND``)."""
    return [shelf_partition(shelf)] + ([shelf_partition(shelf, city)] if city else [])


#: Between the name and the id: below every character a name keeps (control characters become
#: spaces), so that a name sorts before the longer names it begins ("Arbat" before "Arbat North").
_NAME_END = "\x01"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def name_sort_key(name: str, offering_id: str) -> str:
    cut = _CONTROL.sub(" ", normalise(name)).encode()[:NAME_KEY_BYTES].decode(errors="ignore")
    return f"{NAME_KEYS[0]}{cut}{_NAME_END}{offering_id}"
