"""Email intake throughput: mails per second through parse → transduce → buffer on the corpus,
beside the standard library's bare parse of the same bytes.

    python -m bench.email_parse [--quick] [--json]

The corpus is ../shared/corpus/eml (WILSON_CORPUS_DIR), read into memory first: no disk or IMAP
time is counted. Three paths over the same bytes, each the best of a few rounds:
  - baseline: `BytesParser(policy=email.policy.default).parsebytes` alone (headers stay undecoded), of
    the whole mail, and of the first 512 KB (what Wilson reads of a larger mail: the fair comparison);
  - transduce: channels/email/parse.py's parse_message, describe, payload and dedup_key, which decode
    every header Wilson uses, walk the parts, turn HTML into text and list attachments;
  - buffer: the same, committed to a fresh SQLite database as the channel does (batches of 25 rows
    in one transaction through storage.routing.commit_buffered).
The ratios say what Wilson's reading costs over the bare parse; absolute rates are noise on a
shared machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from email import policy
from email.parser import BytesParser
from pathlib import Path
from zoneinfo import ZoneInfo

from loguru import logger

from bench.common import ROOT, Figure, cli, ratio, result
from wilson.kernel.clock import monotonic

TZ = ZoneInfo("Europe/Berlin")
BATCH = 25  # as channels/email/channel.py commits


def corpus() -> list[bytes]:
    base = Path(os.environ.get("WILSON_CORPUS_DIR") or ROOT.parent / "shared" / "corpus") / "eml"
    return [p.read_bytes() for p in sorted(base.glob("**/*.eml"))]


def capped(mails: list[bytes]) -> list[bytes]:
    from channels.email.parse import MAX_PARSE_BYTES

    return [m[:MAX_PARSE_BYTES] for m in mails]


def stdlib(mails: list[bytes]) -> int:
    parser = BytesParser(policy=policy.default)
    for raw in mails:
        parser.parsebytes(raw)
    return len(mails)


def transduce(mails: list[bytes], account: str = "bench@local") -> list:
    from channels.email import parse

    out = []
    for uid, raw in enumerate(mails, 1):
        try:
            parsed = parse.parse_message(raw, bulk_senders=[])
        except parse.ParseError:
            continue
        out.append(
            (
                parse.describe(parsed, TZ, folder="INBOX"),
                parse.dedup_key(parsed, raw, account),
                parse.payload(parsed, folder="INBOX", uid=uid, uidvalidity=1),
            )
        )
    return out


def buffer(mails: list[bytes], account: str) -> int:
    from datetime import datetime, timezone

    from storage.routing import commit_buffered
    from storage.db import database

    at = datetime(2027, 1, 5, 8, tzinfo=timezone.utc)
    rows = transduce(mails, account)
    kept = 0
    for start in range(0, len(rows), BATCH):
        with database.atomic():
            for text, key, payload in rows[start : start + BATCH]:
                kept += commit_buffered(channel="email", text=text, dedup_key=key, payload=payload, at=at) is not None
    return kept


def best(fn, rounds: int) -> float:
    times = []
    for n in range(rounds):
        started = monotonic()
        fn(n)
        times.append(monotonic() - started)
    return min(times)


def run(quick: bool) -> dict:
    mails = corpus()
    if not mails:
        return result("email parse", [], notes=["no corpus at ../shared/corpus/eml (set WILSON_CORPUS_DIR)"])
    from storage.db import open_database
    from storage.migrations import migrate

    logger.remove()  # the buffer path traces nothing, but the database layer may log at debug level
    rounds = 2 if quick else 5
    home = Path(tempfile.mkdtemp(prefix="wilson-bench-email-"))
    try:
        db = open_database(None, home)
        migrate()
        size = sum(len(m) for m in mails)
        base = best(lambda n: stdlib(mails), rounds)
        head = capped(mails)
        base_capped = best(lambda n: stdlib(head), rounds)
        read = transduce(mails)
        trans = best(lambda n: transduce(mails), rounds)
        buffered = best(lambda n: buffer(mails, f"bench{n}@local"), rounds)  # a new account: no row is a duplicate
        db.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    n = len(mails)
    rate = {"stdlib": n / base, "stdlib_capped": n / base_capped, "transduce": n / trans, "buffer": n / buffered}
    same = "stdlib parse only, first 512 KB"
    figures = [
        Figure(
            "parse → transduce",
            round(rate["transduce"], 1),
            "mails/s",
            same,
            round(rate["stdlib_capped"], 1),
            ratio(rate["transduce"], rate["stdlib_capped"]),
        ),
        Figure(
            "parse → transduce → buffer (SQLite)",
            round(rate["buffer"], 1),
            "mails/s",
            same,
            round(rate["stdlib_capped"], 1),
            ratio(rate["buffer"], rate["stdlib_capped"]),
        ),
        Figure(
            "parse → transduce → buffer (SQLite)",
            round(rate["buffer"], 1),
            "mails/s",
            "stdlib parse only, whole mail",
            round(rate["stdlib"], 1),
            ratio(rate["buffer"], rate["stdlib"]),
            note="Wilson reads at most 512 KB of a mail",
        ),
    ]
    notes = [
        f"{n} mails, {size / 1024 / 1024:.1f} MB; {len(read)} read, {n - len(read)} unreadable "
        f"(traced by the channel); best of {rounds} rounds"
    ]
    return result("email parse", figures, {"mails": n, "bytes": size, "rates": rate}, notes)


if __name__ == "__main__":
    raise SystemExit(cli("bench.email_parse", __doc__, run))
