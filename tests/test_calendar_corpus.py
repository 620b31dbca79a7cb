"""Real-world calendar files: each one is read or rejected with a clear one-line error.

The corpus lives outside the project (see its SOURCES.md) and is found through
WILSON_CORPUS_DIR, defaulting to ../shared/corpus beside the checkout.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from channels.calendar import (
    MAX_OCCURRENCES,
    MAX_SERIES_OCCURRENCES,
    CalendarChannel,
    CalendarError,
    Event,
    IcsFileSource,
    ParseReport,
    diff,
    parse_calendar,
)
from storage.db import open_database
from storage.migrations import migrate
from storage.models import Cursor, ReceptorBuffer
from wilson.kernel import config as configmod
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from wilson.kernel.messages import ChannelSync, Ping
from tests.actor_support import RecordingDirectory

CORPUS = Path(os.environ.get("WILSON_CORPUS_DIR") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
FILES = sorted((CORPUS / "ics").glob("**/*.ics"))

pytestmark = pytest.mark.skipif(not FILES, reason=f"no calendar corpus at {CORPUS}/ics (set WILSON_CORPUS_DIR)")

UTC = timezone.utc
# Most of the corpus was written between 2000 and 2025; a wide window reads nearly all of it.
START = datetime(2000, 1, 1, tzinfo=UTC)
END = datetime(2030, 1, 1, tzinfo=UTC)
TZ = ZoneInfo("Europe/Berlin")


def test_every_file_yields_events_or_one_clear_error():
    with_events, empty, rejected, unexpected = {}, [], {}, {}
    for path in FILES:
        name = str(path.relative_to(CORPUS))
        data = path.read_bytes()
        report = ParseReport()
        try:
            events = parse_calendar(data, name=name, window_start=START, window_end=END, tz=TZ, report=report)
        except CalendarError as exc:
            rejected[name] = str(exc)
            continue
        except Exception as exc:  # anything but CalendarError is a bug
            unexpected[name] = f"{type(exc).__name__}: {exc}"
            continue
        assert all(isinstance(e, Event) and e.start.tzinfo is not None for e in events), name
        assert all(e.end is None or e.end > e.start for e in events), name
        # The work done is bounded by counts: each series gives at most MAX_SERIES_OCCURRENCES.
        series = len(re.findall(rb"^BEGIN:VEVENT", data, re.IGNORECASE | re.MULTILINE))
        assert report.occurrences <= max(series, 1) * MAX_SERIES_OCCURRENCES, name
        assert len(events) <= MAX_OCCURRENCES, name
        if events:
            with_events[name] = len(events)
        else:
            empty.append(name)
    print(
        f"\ncalendar corpus: {len(FILES)} files: {len(with_events)} with events "
        f"({sum(with_events.values())} occurrences), {len(empty)} without events in the window, "
        f"{len(rejected)} rejected, {len(unexpected)} unexpected errors"
    )
    for _name, message in sorted(rejected.items()):
        print(f"  rejected {message}")
    assert unexpected == {}
    for name, message in rejected.items():
        assert message.startswith(f"{name}: ") and "\n" not in message and len(message) < 400
    assert len(with_events) > len(FILES) // 2  # the corpus is mostly valid calendars


@pytest.mark.slow
def test_corpus_through_the_running_actor(tmp_path):
    db = open_database(None, tmp_path)
    migrate()
    try:
        config = configmod.load(tmp_path, environ={})
        config.set("core", "timezone", "Europe/Berlin")
        config.set("calendar", "horizon_days", (END - START).days)
        directory = RecordingDirectory()
        crashes = directory.crashes
        ctx = Context(config=config, clock=SimClock(START), synapse=None, directory=directory)
        sources = [IcsFileSource(path) for path in FILES]
        ref = CalendarChannel.start(ctx, sources=sources)
        try:
            ref.tell(ChannelSync("corpus"))
            assert ref.ask(Ping(), timeout=50) == "pong"
            assert ref.is_alive() and crashes == []
            first = ReceptorBuffer.select().count()
            assert first > 0
            assert Cursor.select().count() > len(FILES) // 2

            # The same files read again give exactly no changes (checked before dedup could hide any).
            for source in sources:
                cursor = Cursor.get_or_none(Cursor.name == f"calendar:{source.id}")
                if cursor is None:
                    continue
                try:
                    events = parse_calendar(
                        source.path.read_bytes(), name=str(source.path), window_start=START, window_end=END, tz=TZ
                    )
                except CalendarError:
                    continue
                assert diff(cursor.value["events"], events, now=START, known_until=END) == [], source.path

            # And the actor, made to read everything again, buffers nothing new.
            for cursor in Cursor.select():
                value = dict(cursor.value)
                value["fetch"] = {}
                Cursor.update(value=value).where(Cursor.id == cursor.id).execute()
            ref.tell(ChannelSync("corpus again"))
            assert ref.ask(Ping(), timeout=50) == "pong"
            assert ref.is_alive() and crashes == []
            assert ReceptorBuffer.select().count() == first
            print(f"\ncalendar corpus through the actor: {len(sources)} sources, {first} buffered changes")
        finally:
            ref.stop()
    finally:
        db.close()
