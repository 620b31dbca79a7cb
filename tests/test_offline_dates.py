"""wilson/model/offline/dates.py: dates as people write them, in the user's timezone, resolved forward."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import dates

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def at(text: str, tz=BERLIN) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=tz)


@pytest.mark.parametrize(
    "phrase, now, expected",
    [
        # ordinals: the next such day that exists, this month or later
        ("the 25th", "2027-01-05T10:00", date(2027, 1, 25)),
        ("the 25th", "2027-01-26T10:00", date(2027, 2, 25)),
        ("the 5th", "2027-01-05T23:30", date(2027, 1, 5)),  # today is still forward
        ("the 31st", "2027-02-10T10:00", date(2027, 3, 31)),  # February has none: March's
        ("the 29th", "2027-02-10T10:00", date(2027, 3, 29)),
        ("the 29th", "2028-02-10T10:00", date(2028, 2, 29)),  # a leap year has it
        ("the 31st", "2027-04-30T10:00", date(2027, 5, 31)),  # April has none
        # weekdays: "next Tuesday" said on a Tuesday is a week later, never today
        ("next Tuesday", "2027-01-05T10:00", date(2027, 1, 12)),
        ("on Sunday", "2027-01-05T10:00", date(2027, 1, 10)),
        ("by Friday", "2027-01-05T10:00", date(2027, 1, 8)),
        ("in two weeks", "2027-01-05T10:00", date(2027, 1, 19)),
        # month edges, forward: in April "end of March" is next year's
        ("end of March", "2027-01-05T10:00", date(2027, 3, 31)),
        ("end of March", "2027-03-31T10:00", date(2027, 3, 31)),
        ("end of March", "2027-04-03T10:00", date(2028, 3, 31)),
        ("end of the month", "2027-02-10T10:00", date(2027, 2, 28)),
        ("end of month", "2028-02-10T10:00", date(2028, 2, 29)),
        ("end of next month", "2027-12-10T10:00", date(2028, 1, 31)),
        ("beginning of next month", "2027-01-31T23:30", date(2027, 2, 1)),
        ("2027-02-01", "2027-01-05T10:00", date(2027, 2, 1)),
    ],
)
def test_resolve_forward(phrase, now, expected):
    assert dates.resolve(phrase, at(now), BERLIN) == expected


@pytest.mark.parametrize(
    "now, expected",
    [
        # the night before summer time: 15:00 the next day is 15:00 on the wall, at +02:00
        ("2027-03-27T10:00", "2027-03-28T15:00:00+02:00"),
        # the night before winter time: back to +01:00
        ("2027-10-30T10:00", "2027-10-31T15:00:00+01:00"),
        ("2027-01-05T10:00", "2027-01-06T15:00:00+01:00"),
    ],
)
def test_times_of_day_keep_the_wall_clock_across_dst(now, expected):
    value = dates.resolve("tomorrow at 3pm", at(now), BERLIN)
    assert value.isoformat() == expected


def test_a_reminder_on_a_day_is_nine_on_its_wall_clock_after_a_dst_change():
    now = at("2027-03-26T10:00")
    found = dates.search("call the bank in two days", now, BERLIN)
    assert [f.value for f in found] == [date(2027, 3, 28)]
    moment = dates.at_moment(found[0], now, BERLIN)
    assert moment.isoformat() == "2027-03-28T09:00:00+02:00"
    # one hour of the two days went to summer time (aware datetimes of one zone subtract as wall clocks)
    assert moment.astimezone(timezone.utc) - now.astimezone(timezone.utc) == timedelta(days=1, hours=22)


def test_a_time_already_past_today_means_tomorrow():
    assert dates.resolve("at 8am", at("2027-01-05T10:00"), BERLIN) == at("2027-01-06T08:00")
    assert dates.resolve("at 6pm", at("2027-01-05T10:00"), BERLIN) == at("2027-01-05T18:00")


def test_tonight_without_an_hour_is_eight_in_the_evening():
    assert dates.resolve("tonight", at("2027-01-05T10:00"), BERLIN) == at("2027-01-05T20:00")


def test_the_user_timezone_decides_the_day():
    # 23:30 UTC on the 5th is already the 6th in Berlin: "tomorrow" is the 7th there
    now = datetime(2027, 1, 5, 23, 30, tzinfo=timezone.utc)
    assert dates.resolve("tomorrow", now, BERLIN) == date(2027, 1, 7)
    assert dates.resolve("tomorrow", now, NEW_YORK) == date(2027, 1, 6)


def test_numeric_dates_follow_local_order():
    now = at("2027-01-05T10:00")
    assert dates.find_dates("pay by 3/4", now.date(), NEW_YORK) == [date(2027, 3, 4)]
    assert dates.find_dates("pay by 3/4", now.date(), BERLIN) == [date(2027, 4, 3)]


def test_the_reading_is_stated_for_the_proposal():
    (found,) = dates.search("file my taxes by the 25th", at("2027-01-05T10:00"), BERLIN)
    assert found.stated(BERLIN) == "“the 25th” → Mon 25 Jan"
    (timed,) = dates.search("remind me tomorrow at 3pm", at("2027-01-05T10:00"), BERLIN)
    assert timed.stated(BERLIN) == "“tomorrow at 3pm” → Wed 6 Jan 2027 15:00"


def test_search_finds_every_phrase_in_order_and_skips_non_dates():
    found = dates.search("move it from the 25th to end of March", at("2027-01-05T10:00"), BERLIN)
    assert [f.value for f in found] == [date(2027, 1, 25), date(2027, 3, 31)]
    assert dates.search("version 1.2 of the report, March 2027 was busy", at("2027-01-05T10:00"), BERLIN) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("heading to Lisbon on the 3rd for 5 nights", date(2027, 2, 3)),  # a short word after it is no month
        ("pay the rent on the 3rd, not later", date(2027, 2, 3)),
        ("the 3rd of March", date(2027, 3, 3)),
        ("I'll go to the dentist on the 15th of next month", date(2027, 2, 15)),
    ],
)
def test_an_ordinal_day_is_read_whatever_word_follows_unless_a_month_does(text, expected):
    assert [f.value for f in dates.search(text, at("2027-01-05T10:00"), BERLIN)] == [expected]


@pytest.mark.parametrize(
    "words, expected",
    [
        ("what's on this week?", (date(2027, 1, 5), date(2027, 1, 10), "this week")),
        ("and next week?", (date(2027, 1, 11), date(2027, 1, 17), "next week")),
        ("anything tomorrow", (date(2027, 1, 6), date(2027, 1, 6), "tomorrow")),
        ("this weekend", (date(2027, 1, 9), date(2027, 1, 10), "this weekend")),
        ("this month", (date(2027, 1, 5), date(2027, 1, 31), "this month")),
        ("what's coming", (date(2027, 1, 5), date(2027, 1, 18), "the next two weeks")),
    ],
)
def test_week_range(words, expected):
    assert dates.week_range(words, at("2027-01-05T10:00"), BERLIN) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # a time written out joins the day read beside it: "on the 20th at 3pm" was the 20th alone, and
        # "this weekend at 8pm" two phrases, today's 20:00 and Saturday's morning
        ("remind me on the 20th at 3pm to call Tom", datetime(2027, 1, 20, 15, 0, tzinfo=BERLIN)),
        ("at 3pm on the 20th", datetime(2027, 1, 20, 15, 0, tzinfo=BERLIN)),
        ("this weekend at 8pm call Gran", datetime(2027, 1, 9, 20, 0, tzinfo=BERLIN)),
        ("end of March at 5pm", datetime(2027, 3, 31, 17, 0, tzinfo=BERLIN)),
        ("at 10:30am on Friday", datetime(2027, 1, 8, 10, 30, tzinfo=BERLIN)),
        ("at 9:30 tomorrow", datetime(2027, 1, 6, 9, 30, tzinfo=BERLIN)),  # minutes in digits: as written
        ("Friday 3pm", datetime(2027, 1, 8, 15, 0, tzinfo=BERLIN)),
        ("at 12am", datetime(2027, 1, 6, 0, 0, tzinfo=BERLIN)),
        ("Jan 12 @ 3pm", datetime(2027, 1, 12, 15, 0, tzinfo=BERLIN)),
        ("at 3pm EST on Friday", datetime(2027, 1, 8, 21, 0, tzinfo=BERLIN)),  # the zone's 3pm, told in Berlin's time
        ("See you Friday at 7.30pm", datetime(2027, 1, 8, 19, 30, tzinfo=BERLIN)),
        # a zone's letters between the time and its day: the day was lost ("at 10:00 UTC tomorrow" was today's 10:00)
        ("remind me at 10:00 UTC tomorrow to call Tom", datetime(2027, 1, 6, 11, 0, tzinfo=BERLIN)),
        ("tomorrow at 23:30 (UTC)", datetime(2027, 1, 7, 0, 30, tzinfo=BERLIN)),
        # "the Friday after next" was the coming Friday, with "next" left in the reminder's text
        ("remind me the Friday after next to renew the permit", date(2027, 1, 15)),
        ("Tuesday after next at 3pm", datetime(2027, 1, 19, 15, 0, tzinfo=BERLIN)),
        # a range of hours after "between" is its start, and its end no moment of its own (it was today's 16:00 too)
        ("remind me between 2pm and 4pm tomorrow to call the bank", datetime(2027, 1, 6, 14, 0, tzinfo=BERLIN)),
        ("tomorrow between 2pm and 4pm", datetime(2027, 1, 6, 14, 0, tzinfo=BERLIN)),
        ("between 9 and 11 on Friday", datetime(2027, 1, 8, 9, 0, tzinfo=BERLIN)),  # it was 9 November
        # the end's am/pm is the start's too
        ("remind me between 2 and 4pm tomorrow to call the bank", datetime(2027, 1, 6, 14, 0, tzinfo=BERLIN)),
        ("between 11 and 1pm tomorrow", datetime(2027, 1, 6, 11, 0, tzinfo=BERLIN)),
        ("lunch between 12 and 1pm", datetime(2027, 1, 5, 12, 0, tzinfo=BERLIN)),  # noon, not midnight
        ("between 10 and 12pm", datetime(2027, 1, 5, 10, 0, tzinfo=BERLIN)),  # a range up to noon: it was 22:00
        ("remind me the Friday after next week to renew the permit", date(2027, 1, 22)),
        # a zone with an offset, and the user's own zone by its other name, is the user's local time in July
        ("remind me at 10:00 GMT+1 tomorrow to join", datetime(2027, 1, 6, 10, 0, tzinfo=BERLIN)),
        ("at 3pm (GMT+2) on Friday", datetime(2027, 1, 8, 14, 0, tzinfo=BERLIN)),
        ("at 10:00 UTC-5 tomorrow", datetime(2027, 1, 6, 16, 0, tzinfo=BERLIN)),
        ("at 10:00 CET on 1 July", datetime(2027, 7, 1, 10, 0, tzinfo=BERLIN)),
    ],
)
def test_a_written_time_joins_its_day(text, expected):
    (found,) = dates.search(text, at("2027-01-05T08:00"), BERLIN, parts=True)
    assert found.value == expected
    assert text[found.start : found.start + len(found.phrase)] == found.phrase


@pytest.mark.parametrize(
    "text",
    [
        "add check the parcel, delivery takes between 3 and 5 days",
        "remind me to order between 10 and 20 euros of coffee",
        "remind me to buy between 2 and 3 kg of apples",
        "book a table for between 2 and 3 people",
        "add buy a gift between €10 and €20",
        "add buy a gift between 10 and 20 €",
        "between 5 and 10 cm",
        "between 1 and 2 l",
    ],
)
def test_a_count_between_two_numbers_is_no_date_and_no_hour(text):
    # 14:00 today, then 10 Jan 2120 or 2 March: a count read as an hour or a date
    assert dates.search(text, at("2027-01-05T08:00"), BERLIN, months=True, parts=True) == []


def test_a_zone_said_with_a_time_is_told_in_the_users_time():
    (found,) = dates.search("call at 9am EST", at("2027-01-05T08:00"), BERLIN)
    assert found.value == datetime(2027, 1, 5, 15, 0, tzinfo=BERLIN)
    assert "9am EST is 15:00 your time" in found.stated(BERLIN)
    # the next time that zone's clock shows it: 11pm PST on the 4th is 08:00 on the 5th in Berlin, two hours on
    (found,) = dates.search("at 11pm PST", at("2027-01-05T06:00"), BERLIN)
    assert found.value == datetime(2027, 1, 5, 8, 0, tzinfo=BERLIN)
    # the user's own zone by its own name tells nothing more
    (found,) = dates.search("at 10:00 CET", at("2027-01-05T08:00"), BERLIN)
    assert found.value == datetime(2027, 1, 5, 10, 0, tzinfo=BERLIN) and "your time" not in found.stated(BERLIN)


def test_written_times_that_are_no_moment_of_a_day_stay_apart():
    now = at("2027-01-05T08:00")
    # a range of hours is opening hours, and a list is so many moments, each its own
    assert dates.search("Office hours Mon-Fri 9am-5pm", now, BERLIN) == []
    assert [f.value.hour for f in dates.search("Times: 10am, 2pm, 4pm", now, BERLIN)] == [10, 14, 16]
    # "tonight" is today's evening even once 20:00 has passed (it went to tomorrow)
    late = at("2027-01-05T20:30")
    for text in ("tonight at 11pm", "at 11pm tonight", "Dinner tonight at 9:30pm"):
        (found,) = dates.search(text, late, BERLIN)
        assert found.value.date() == date(2027, 1, 5), text


@pytest.mark.parametrize(
    "text, now, expected",
    [
        # said on a Tuesday, "next Wednesday" was tomorrow, as "on Wednesday" is
        ("next Wednesday", "2027-01-05T08:00", date(2027, 1, 13)),
        ("job interview next Wednesday at 2", "2027-01-05T08:00", datetime(2027, 1, 13, 14, 0, tzinfo=BERLIN)),
        ("dinner next Friday evening", "2027-01-05T08:00", datetime(2027, 1, 15, 18, 0, tzinfo=BERLIN)),
        ("pay it by next Friday", "2027-01-05T08:00", date(2027, 1, 15)),
        ("next Monday", "2027-01-10T08:00", date(2027, 1, 11)),  # said on a Sunday: tomorrow is next week's
        ("next Wednesday", "2027-01-06T08:00", date(2027, 1, 13)),  # said on a Wednesday
        ("on Wednesday", "2027-01-05T08:00", date(2027, 1, 6)),
        ("next fri", "2027-01-05T08:00", date(2027, 1, 15)),
        # the day written beside it is the day meant
        ("next Thursday, 7 Jan at 3pm", "2027-01-05T08:00", datetime(2027, 1, 7, 15, 0, tzinfo=BERLIN)),
        ("next Wednesday 6th", "2027-01-05T08:00", date(2027, 1, 6)),
    ],
)
def test_next_and_a_weekday_is_that_day_of_next_week(text, now, expected):
    (found,) = dates.search(text, at(now), BERLIN, parts=True)
    assert found.value == expected


def test_this_weekend_asked_on_a_weekend_day_is_what_is_left_of_it():
    # on a Sunday it was the next weekend
    assert dates.week_range("this weekend?", at("2027-01-10T10:00"), BERLIN) == (
        date(2027, 1, 10),
        date(2027, 1, 10),
        "this weekend",
    )
    assert dates.week_range("this weekend?", at("2027-01-09T10:00"), BERLIN) == (
        date(2027, 1, 9),
        date(2027, 1, 10),
        "this weekend",
    )


@pytest.mark.parametrize(
    "text, now, expected",
    [
        # a request "this weekend" asked when: its Saturday, or today on a weekend day
        ("remind me this weekend to clean the garage", "2027-01-05T08:00", date(2027, 1, 9)),
        ("at the weekend fix the bike", "2027-01-05T08:00", date(2027, 1, 9)),
        ("over the weekend read the contract", "2027-01-09T08:00", date(2027, 1, 9)),
        ("on the weekend call Gran", "2027-01-10T08:00", date(2027, 1, 10)),
        ("this weekend at 10 wash the car", "2027-01-05T08:00", datetime(2027, 1, 9, 10, 0, tzinfo=BERLIN)),
        # on a Saturday evening what is left of the weekend is Sunday ("When should I remind you?" before)
        ("this weekend at 10 wash the car", "2027-01-09T20:00", datetime(2027, 1, 10, 10, 0, tzinfo=BERLIN)),
        ("this weekend water the plants", "2027-01-09T08:00", date(2027, 1, 9)),
        ("this weekend water the plants", "2027-01-09T14:00", date(2027, 1, 10)),
        # but a moment still to come on the Saturday stays there
        ("this weekend at 10 wash the car", "2027-01-09T09:30", datetime(2027, 1, 9, 10, 0, tzinfo=BERLIN)),
        ("this weekend in the evening call Gran", "2027-01-09T09:30", datetime(2027, 1, 9, 18, 0, tzinfo=BERLIN)),
    ],
)
def test_the_weekend_in_a_request_is_its_saturday(text, now, expected):
    (found,) = dates.search(text, at(now), BERLIN, parts=True)
    assert found.value == expected
    assert dates.search("see you at the weekend!", at(now), BERLIN) == []  # in a mail: news, not a date
    assert dates.search("sort out this weekend's shopping", at(now), BERLIN, parts=True) == []


@pytest.mark.parametrize(
    "text, now, expected",
    [
        # a day with its part: the parser keeps the day and drops "evening", which is the evening's hour
        ("remind me on Friday evening to call Tom", "2027-01-05T08:00", "2027-01-08T18:00:00+01:00"),
        ("on Friday afternoon pick up the parcel", "2027-01-05T08:00", "2027-01-08T14:00:00+01:00"),
        ("Saturday night set the alarm", "2027-01-05T08:00", "2027-01-09T21:00:00+01:00"),
        ("tomorrow morning call the bank", "2027-01-05T08:00", "2027-01-06T09:00:00+01:00"),
        # the part written apart from its day, before or after it, which the parser does not read
        ("tomorrow in the evening call Tom", "2027-01-05T08:00", "2027-01-06T18:00:00+01:00"),
        ("on Friday at lunchtime book the table", "2027-01-05T08:00", "2027-01-08T12:00:00+01:00"),
        ("at lunchtime tomorrow call Mum", "2027-01-05T08:00", "2027-01-06T12:00:00+01:00"),
        # the part alone: "this evening" is today's, "in the morning" the next morning to come
        ("water the plants this evening", "2027-01-05T08:00", "2027-01-05T18:00:00+01:00"),
        ("at lunchtime eat", "2027-01-05T08:00", "2027-01-05T12:00:00+01:00"),
        ("call the bank in the morning", "2027-01-05T20:00", "2027-01-06T09:00:00+01:00"),
        ("call the bank in the morning", "2027-01-05T07:00", "2027-01-05T09:00:00+01:00"),
        ("call the bank this morning", "2027-01-05T20:00", "2027-01-05T09:00:00+01:00"),  # gone: at_moment says so
        # an hour said with the part still wins over the part's own hour
        ("Friday evening at 7", "2027-01-05T08:00", "2027-01-08T19:00:00+01:00"),
        ("at 8 in the evening", "2027-01-05T08:00", "2027-01-05T20:00:00+01:00"),
    ],
)
def test_a_part_of_the_day_without_a_time_is_its_usual_hour(text, now, expected):
    (found,) = dates.search(text, at(now), BERLIN, parts=True)
    assert found.value.isoformat() == expected
    assert text[found.start : found.start + len(found.phrase)] == found.phrase


def test_a_part_of_the_day_that_has_passed_is_no_moment_for_a_reminder():
    (found,) = dates.search("call the bank this morning", at("2027-01-05T20:00"), BERLIN, parts=True)
    assert dates.at_moment(found, at("2027-01-05T20:00"), BERLIN) is None


@pytest.mark.parametrize(
    "text",
    [
        "Thanks for your call this morning, all sorted.",
        "Our shop is open in the evening too.",
        "We went for a walk in the afternoon.",
    ],
)
def test_a_part_of_the_day_alone_is_no_date_in_what_others_write(text):
    # read so, a mail about this morning became "a date within a week" to the urgency rules
    assert dates.search(text, at("2027-01-05T15:00"), BERLIN) == []


def test_a_part_of_the_day_joins_only_the_day_beside_it():
    # the day after it, farther on, was joined with the phrase left empty
    found = dates.search("call Bob in the evening and pay rent on Friday", at("2027-01-05T08:00"), BERLIN, parts=True)
    assert [(f.phrase, f.value.isoformat()) for f in found] == [
        ("in the evening", "2027-01-05T18:00:00+01:00"),
        ("on Friday", "2027-01-08"),
    ]


def test_a_long_paste_is_not_read_part_by_part():
    found = dates.search("We meet in the morning. " * 1000, at("2027-01-05T08:00"), BERLIN, parts=True)
    assert len(found) == dates.PARTS_READ
    # nor time by time: thousands of times took seconds, each compared with every other
    for paste in ("half past 5 " * 1500, "at 5 " * 4000):
        assert len(dates.search(paste, at("2027-01-05T08:00"), BERLIN, parts=True)) <= dates.PARTS_READ


@pytest.mark.parametrize(
    "text, now, expected, reading",
    [
        # "at 9" is no day of the month: 1 to 11 without am/pm is the morning, the next one to come
        (
            "call the plumber tomorrow at 9",
            "2027-01-21T18:00",
            "2027-01-22T09:00:00+01:00",
            "9 read as 09:00, the morning",
        ),
        (
            "water the plants on Saturday at 10",
            "2027-01-26T20:00",
            "2027-01-30T10:00:00+01:00",
            "10 read as 10:00, the morning",
        ),
        (
            "at 10 on Saturday water the plants",
            "2027-01-26T20:00",
            "2027-01-30T10:00:00+01:00",
            "10 read as 10:00, the morning",
        ),
        ("at 7 take the bins out", "2027-01-21T18:00", "2027-01-22T07:00:00+01:00", "7 read as 07:00, the morning"),
        ("at 7 take the bins out", "2027-01-21T06:00", "2027-01-21T07:00:00+01:00", "7 read as 07:00, the morning"),
        # unless the words say evening
        (
            "dinner with Sam at 8 on Friday",
            "2027-01-19T10:00",
            "2027-01-22T20:00:00+01:00",
            "8 read as 20:00, the evening",
        ),
        ("tonight at 8", "2027-01-21T12:00", "2027-01-21T20:00:00+01:00", "8 read as 20:00, the evening"),
        # 1 to 6 is the afternoon or evening ("call Mum at 5" was five in the morning) unless the morning is said
        ("call Mum at 5", "2027-01-21T08:00", "2027-01-21T17:00:00+01:00", "5 read as 17:00, the afternoon"),
        (
            "the meeting tomorrow at 3",
            "2027-01-21T08:00",
            "2027-01-22T15:00:00+01:00",
            "3 read as 15:00, the afternoon",
        ),
        ("go running at 6", "2027-01-21T08:00", "2027-01-21T18:00:00+01:00", "6 read as 18:00, the evening"),
        ("wake up at 6", "2027-01-21T08:00", "2027-01-22T06:00:00+01:00", "6 read as 06:00, the morning"),
        (
            "tomorrow at 6 to wake the kids",
            "2027-01-21T08:00",
            "2027-01-22T06:00:00+01:00",
            "6 read as 06:00, the morning",
        ),
        # the morning said, not a word that contains or resembles it
        (
            "remind me at 5 to leave work early",
            "2027-01-21T08:00",
            "2027-01-21T17:00:00+01:00",
            "5 read as 17:00, the afternoon",
        ),
        (
            "call at 5 about the wakeboard",
            "2027-01-21T08:00",
            "2027-01-21T17:00:00+01:00",
            "5 read as 17:00, the afternoon",
        ),
        ("tomorrow morning at 5", "2027-01-21T08:00", "2027-01-22T05:00:00+01:00", "5 read as 05:00, the morning"),
        # an hour inside the parser's own phrase joins it (the day was lost, and the hour read as today's)
        (
            "tomorrow at 6 in the morning",
            "2027-01-21T08:00",
            "2027-01-22T06:00:00+01:00",
            "6 read as 06:00, the morning",
        ),
        ("at 6 in the morning", "2027-01-21T08:00", "2027-01-22T06:00:00+01:00", "6 read as 06:00, the morning"),
        # the hour of a spoken time is read as a bare hour's ("When should I remind you?" before)
        (
            "call Tom at half past 5",
            "2027-01-21T08:00",
            "2027-01-21T17:30:00+01:00",
            "5:30 read as 17:30, the afternoon",
        ),
        (
            "at quarter to 6 pick up Leo",
            "2027-01-21T08:00",
            "2027-01-21T17:45:00+01:00",
            "5:45 read as 17:45, the afternoon",
        ),
        ("at half 5 on Friday", "2027-01-21T08:00", "2027-01-22T17:30:00+01:00", "5:30 read as 17:30, the afternoon"),
        (
            "tomorrow at quarter past 7",
            "2027-01-21T08:00",
            "2027-01-22T07:15:00+01:00",
            "7:15 read as 07:15, the morning",
        ),
        (
            "at half past 5 in the morning",
            "2027-01-21T08:00",
            "2027-01-22T05:30:00+01:00",
            "5:30 read as 05:30, the morning",
        ),
        (
            "half past 8 this evening",
            "2027-01-21T08:00",
            "2027-01-21T20:30:00+01:00",
            "8:30 read as 20:30, the evening",
        ),
        ("at quarter to 1", "2027-01-21T08:00", "2027-01-21T12:45:00+01:00", ""),
        (
            "at quarter to 7 leave for work",
            "2027-01-21T08:00",
            "2027-01-22T06:45:00+01:00",
            "6:45 read as 06:45, the morning",
        ),  # as 7 is, not as 6
        ("at quarter to 7 a.m. leave", "2027-01-21T08:00", "2027-01-22T06:45:00+01:00", ""),
        ("at 6 p.m. call Tom", "2027-01-21T08:00", "2027-01-21T18:00:00+01:00", ""),
        (
            "call Tom at 5 on the 20th",
            "2027-01-05T08:00",
            "2027-01-20T17:00:00+01:00",
            "5 read as 17:00, the afternoon",
        ),
        ("at half past 5pm", "2027-01-21T08:00", "2027-01-21T17:30:00+01:00", ""),
        # a 24-hour clock hour and an explicit am/pm need no reading
        ("tomorrow at 15", "2027-01-21T18:00", "2027-01-22T15:00:00+01:00", ""),
        ("tomorrow at 9pm", "2027-01-21T18:00", "2027-01-22T21:00:00+01:00", ""),
    ],
)
def test_a_bare_hour_is_read_by_the_part_of_the_day_it_most_likely_means(text, now, expected, reading):
    (found,) = dates.search(text, at(now), BERLIN)
    assert found.value.isoformat() == expected and found.reading == reading
    assert text[found.start : found.start + len(found.phrase)] == found.phrase
    if reading:
        assert found.stated(BERLIN).endswith(f"({reading})")


def test_at_with_a_number_that_is_no_hour_is_left_alone():
    assert dates.search("prices at 10% off", at("2027-01-21T18:00"), BERLIN) == []
    assert dates.search("done in half an hour", at("2027-01-21T18:00"), BERLIN)[0].phrase == "in half an hour"
    assert dates.search("at half past 13", at("2027-01-21T18:00"), BERLIN) == []
    assert dates.search("we met at 25 degrees", at("2027-01-21T18:00"), BERLIN) == []


@pytest.mark.parametrize(
    "text",
    ["remind me to call the landlord about the letter from December 30, 2026", "Contract signed on March 3, 2026"],
)
def test_a_past_date_with_its_year_after_a_comma_stays_past(text):
    assert dates.search(text, at("2027-01-05T10:00"), BERLIN) == []


def test_a_date_the_parser_misreads_in_the_whole_message_is_read_in_its_clause():
    # read whole, the parser finds "20" and "me" (a word in another language), and neither is kept
    found = dates.search(
        "I'm going to Japan on March 20, remind me to buy an adapter on March 1", at("2027-01-05T10:00"), BERLIN
    )
    assert found and (found[0].phrase, found[0].value) == ("on March 20", date(2027, 3, 20))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("remind me in 2 hours to check the oven", "2027-01-05T10:00"),  # it was "Tue 5 Jan", so 09:00
        ("in 30 minutes", "2027-01-05T08:30"),
        ("in an hour", "2027-01-05T09:00"),
        ("in half an hour call Bob", "2027-01-05T08:30"),
        ("in 2h", "2027-01-05T10:00"),
        ("in 20 hours", "2027-01-06T04:00"),  # tomorrow, by the clock
        ("remind me in 1 hour 30 minutes to take the cake out", "2027-01-05T09:30"),
    ],
)
def test_a_while_from_now_is_that_moment(text, expected):
    now = at("2027-01-05T08:00")
    (found,) = dates.search(text, now, BERLIN)
    assert found.value == at(expected)
    assert found.stated(BERLIN).startswith(f"“{found.phrase}” → ")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("remind me in June to renew the car insurance", date(2027, 6, 1)),
        ("renew the car insurance in early June", date(2027, 6, 1)),
        ("in June 2028 renew the passport", date(2028, 6, 1)),
        ("in December", date(2027, 12, 1)),
        ("in January", None),  # said in January: some day of this month, which only the user can say
        ("in June 0000", None),  # raised "year 0 is out of range"
        ("in June 9999", None),
    ],
)
def test_a_month_named_alone_is_its_first_day_where_a_reminder_asks_for_one(text, expected):
    now = at("2027-01-05T08:00")
    assert [f.value for f in dates.search(text, now, BERLIN, months=True)] == ([expected] if expected else [])
    assert dates.search(text, now, BERLIN) == []  # a deadline or a trip "in June" has no day


def test_a_german_weekday_and_a_whole_hour_in_german_are_read_as_written():
    now = datetime(2027, 3, 10, 9, 0, tzinfo=BERLIN)  # a Wednesday
    assert [f.value for f in dates.search("bitte bis Freitag", now, BERLIN)] == [date(2027, 3, 12)]
    assert [f.value for f in dates.search("am Montag um 10 Uhr", now, BERLIN)] == [
        datetime(2027, 3, 15, 10, 0, tzinfo=BERLIN)
    ]
    assert dates.search("Öffnungszeiten: Mo-Fr 8 bis 18 Uhr", now, BERLIN) == []  # opening hours are no moment


def test_a_kept_reading_is_the_one_made_afresh_and_each_caller_gets_its_own_list():
    now = datetime(2027, 1, 5, 10, 0, tzinfo=BERLIN)
    kept = dates.search("call Tom on Friday at 3pm", now, BERLIN, parts=True)
    kept.clear()  # a caller's list is its own: the next one still gets the reading
    again = dates.search("call Tom on Friday at 3pm", now, BERLIN, parts=True)
    dates.forget_readings()
    assert again == dates.search("call Tom on Friday at 3pm", now, BERLIN, parts=True) != []


def test_a_kept_reading_for_an_instant_given_in_another_zone_is_the_one_made_afresh_to_its_repr():
    berlin = datetime(2027, 1, 5, 10, 0, tzinfo=BERLIN)
    utc = berlin.astimezone(timezone.utc)  # equal to it: a reading kept by the instant alone could mix the two
    for now in (berlin, utc, berlin):
        kept = dates.search("in 2 hours or tomorrow at 3pm", now, BERLIN)
        dates.forget_readings()
        assert repr(kept) == repr(dates.search("in 2 hours or tomorrow at 3pm", now, BERLIN))


@pytest.mark.parametrize(
    "text, value",
    [
        # a university's hour is no month: "April 14th, 10 c.t." was the 14th of October
        ("my Disputation is on April 14th, 10 c.t. in room 2.015", datetime(2027, 4, 14, 10, 15, tzinfo=BERLIN)),
        ("Vorlesung um 14 s.t.", datetime(2027, 1, 5, 14, 0, tzinfo=BERLIN)),
        # a stay said in Spanish starts on its first day
        ("Palermo del 3 al 12 de julio", date(2027, 7, 3)),
        # a German day of the month alone, after "bis zum"
        ("die Wasseruhren ablesen lassen, bis zum 25.", date(2027, 1, 25)),
    ],
)
def test_more_ways_a_day_is_written(text, value):
    now = datetime(2027, 1, 5, 9, 0, tzinfo=BERLIN)
    found = dates.search(text, now, BERLIN)
    assert found and found[0].value == value, found


def test_an_ordinal_before_a_noun_is_no_day_and_a_written_hour_is_cut_out_as_written():
    now = datetime(2027, 1, 5, 9, 0, tzinfo=BERLIN)
    assert dates.search("Geschenk für den 30. Geburtstag von Anna besorgen", now, BERLIN) == []
    (found,) = dates.search("del 28 al 3 de julio", now, BERLIN)
    assert found.value == date(2027, 6, 28)  # across the month's end: from June
    (found,) = dates.search("remind me tomorrow 10 c.t. to go to the seminar", now, BERLIN)
    assert found.phrase == "tomorrow 10 c.t." and found.value == datetime(2027, 1, 6, 10, 15, tzinfo=BERLIN)
