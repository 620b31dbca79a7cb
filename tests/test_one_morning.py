"""One morning message: what the morning's sync tells at the briefing minute (a mail triaged then) goes inside
the briefing, so nothing else arrives in the same minute; "what did I miss?" and the told-before check read
the briefing's lines. A whole Wilson, offline, on a simulated clock."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from actors.cortex.told import told_before
from storage.models import Inbox

START = "2027-01-05T08:00:00+01:00"
DINNER = ("anna@example.org", "Dinner on Saturday?", "Hi! Are you free for dinner on Saturday at 7? Love, Anna")


@pytest.fixture
def app(make_app):
    return make_app(start=START, llm="offline", env={"WILSON_CORE_TIMEZONE": "Europe/Berlin"})


def mail(app, sender: str, subject: str, body: str):
    app.inject_buffered(
        "email",
        f"Email from {sender}: {subject}\n{body}",
        {"from": sender, "subject": subject, "date": app.clock.now().isoformat()},
    )


def test_a_mail_triaged_at_the_briefing_minute_is_told_inside_the_briefing_and_nothing_else_then(app):
    app.advance(timedelta(hours=20))  # Wed 04:00
    mail(app, *DINNER)
    app.advance(timedelta(hours=4))  # past the 07:00 sync and briefing
    tz = app.config.timezone
    at_seven = [
        d
        for d in app.user_deliveries()
        if datetime.fromisoformat(d["at"]).astimezone(tz).strftime("%a %H:%M") == "Wed 07:00"
    ]
    assert len(at_seven) == 1, [d["text"] for d in at_seven]
    [morning] = at_seven
    assert morning["text"].startswith("Good morning!") and "Dinner on Saturday?" in morning["text"]

    before = len(app.user_deliveries())
    app.say("what did I miss?")
    assert app.wait_idle()
    [answer] = [d["text"] for d in app.user_deliveries()[before:] if "I told you" in d["text"]]
    assert "07:00 In the morning briefing: From the email “Dinner on Saturday?”" in answer

    # Anna writes again in the thread: the run that reads it is told what the briefing said already
    mail(app, DINNER[0], "Re: Dinner on Saturday?", "Or Sunday, if Saturday is bad?")
    app.sync()
    assert app.wait_idle()
    again = Inbox.select().where(Inbox.text.contains("Or Sunday")).order_by(Inbox.id.desc()).first()
    assert again is not None
    told = told_before(again, app.clock.now(), tz)
    assert told and "Dinner on Saturday?" in told[0]["text"]
