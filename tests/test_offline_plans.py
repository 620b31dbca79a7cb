"""wilson/model/offline/plans.py: a playbook plan fitted to the time left before the event."""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from wilson.model.offline.plans import fit, plan_calls
from wilson.model.offline.recognition import load_playbook

PLAYBOOK = load_playbook()
TRIP = PLAYBOOK.of_kind("trip")
TODAY = date(2027, 1, 5)


def dues(event, start, today=TODAY) -> dict[str, date]:
    return {task.title: due for task, due in fit(event.tasks, start, today)}


def test_far_ahead_every_task_keeps_its_lead_time_after_a_quiet_first_week():
    start = date(2027, 4, 10)
    fitted = dues(TRIP, start)
    assert fitted == {
        t.title: max(start - timedelta(days=t.days_before), TODAY + timedelta(days=8)) for t in TRIP.tasks
    }
    # the passport's 90 days would fall five days after the plan: with three months to go it waits past the quiet
    # week, its day-before heads-up included
    assert fitted["Check passport validity"] == TODAY + timedelta(days=8)
    assert dues(TRIP, date(2027, 6, 10))["Check passport validity"] == date(2027, 6, 10) - timedelta(days=90)


def test_three_days_out_a_trip_drops_booking_and_keeps_packing_and_check_in():
    start = TODAY + timedelta(days=3)
    fitted = dues(TRIP, start)
    assert "Book flights" not in fitted and "Check visa and entry requirements" not in fitted
    assert "Book accommodation" in fitted  # min_days 3: still possible
    assert fitted["Pack"] == start - timedelta(days=2) and fitted["Check in"] == start - timedelta(days=1)
    assert fitted["Check passport validity"] == TODAY + timedelta(days=1)  # its lead time is gone: tomorrow


def test_a_trip_planned_late_catches_up_one_task_a_day_longest_lead_time_first():
    # all five were due tomorrow before: five follow-ups on one day, then nothing for a week; and nothing is
    # due the day after the plan was made when the trip is more than a week away
    start = TODAY + timedelta(days=15)
    fitted = dues(TRIP, start)
    late = [
        "Check passport validity",
        "Check visa and entry requirements",
        "Book flights",
        "Book accommodation",
        "Buy travel insurance",
    ]
    assert [fitted[title] for title in late] == [TODAY + timedelta(days=d) for d in (2, 3, 4, 5, 6)]
    assert fitted["Pack"] == start - timedelta(days=2) and fitted["Check in"] == start - timedelta(days=1)
    # with less time the catching up takes at most the first third of it
    week = dues(TRIP, TODAY + timedelta(days=6))
    assert max(week[title] for title in late) == TODAY + timedelta(days=2)
    assert [week[title] for title in late] == sorted(week[title] for title in late)
    # a task still inside its lead time waits for the ones caught up before it, and keeps three weeks of it
    forty = dues(TRIP, TODAY + timedelta(days=40))
    assert forty["Buy travel insurance"] == forty["Book accommodation"] == TODAY + timedelta(days=19)


@given(st.sampled_from(PLAYBOOK.events), st.integers(min_value=0, max_value=120))
def test_a_task_that_needs_more_lead_time_is_never_due_after_one_that_needs_less(event, days):
    # a trip 32 days out had its insurance due before the flights and the accommodation it caught up
    fitted = fit(event.tasks, TODAY + timedelta(days=days), TODAY)
    for first, first_due in fitted:
        for then, then_due in fitted:
            if first.days_before > then.days_before > 0:
                assert first_due <= then_due, (first.title, first_due, then.title, then_due)


def test_no_deadline_on_or_after_the_start():
    for days in range(1, 8):
        start = TODAY + timedelta(days=days)
        assert all(TODAY <= due < start for due in dues(TRIP, start).values()), days


def test_a_trip_tomorrow_is_packed_for_today_and_one_under_way_gets_nothing():
    assert set(dues(TRIP, TODAY + timedelta(days=1)).values()) == {TODAY}
    assert dues(TRIP, TODAY + timedelta(days=1)).keys() == {"Check passport validity", "Check in", "Pack"}
    assert dues(TRIP, TODAY) == {"Pack": TODAY}  # leaving today: what is left is due today
    assert dues(TRIP, TODAY - timedelta(days=1)) == {}


@given(st.sampled_from(PLAYBOOK.events), st.integers(min_value=0, max_value=400))
def test_every_plan_fits_between_now_and_the_event(event, days):
    start = TODAY + timedelta(days=days)
    for task, due in fit(event.tasks, start, TODAY):
        assert days >= task.min_days
        if task.days_before < 0:  # a step that depends on the event (the new address after the move): after it
            assert due == start + timedelta(days=-task.days_before)
        elif days == 0:
            assert due == TODAY
        else:
            assert TODAY <= due < start and (due > TODAY or days == 1)
            assert due > TODAY + timedelta(days=1) or days <= 7  # not the day after the plan unless urgent
            assert due >= TODAY + timedelta(days=8) or days <= 30  # a month or more ahead: a quiet first week


def test_five_weeks_out_the_catching_up_is_spread_and_in_order_and_the_new_address_comes_after_the_move():
    fitted = dues(TRIP, TODAY + timedelta(days=35))
    order = [
        "Check passport validity",
        "Check visa and entry requirements",
        "Book flights",
        "Book accommodation",
        "Buy travel insurance",
        "Pack",
        "Check in",
    ]
    days = [fitted[title] for title in order]
    assert days == sorted(days) and days[0] == TODAY + timedelta(days=8)  # book before pay before pack
    assert len(set(days[:4])) == 4 and (days[3] - days[0]).days >= 6  # spread, not one a day from tomorrow
    move = dues(PLAYBOOK.of_kind("move"), TODAY + timedelta(days=60))
    assert move["Register the change of address"] == TODAY + timedelta(days=63)
    assert move["Give notice on the current lease"] <= move["Book movers or a van"] <= move["Pack boxes"]


def test_plan_calls_skip_what_is_already_there():
    calls = plan_calls(
        TRIP,
        "Trip to Japan",
        "2027-04-10",
        "2027-04-24",
        date(2027, 4, 10),
        TODAY,
        "Tokyo",
        topics=[{"title": "Trip to Japan", "status": "active"}],
        tasks=[{"title": "Book flights", "topic": "Trip to Japan"}],
    )
    names = [(name, args.get("title")) for name, args in calls]
    assert ("create_topic", "Trip to Japan") not in names and ("create_task", "Book flights") not in names
    assert ("create_task", "Pack") in names
    fresh = plan_calls(TRIP, "Trip to Japan", "2027-04-10", None, date(2027, 4, 10), TODAY, "", [], [])
    assert fresh[0] == ("create_topic", {"title": "Trip to Japan", "starts": "2027-04-10"})


def test_a_trip_at_home_leaves_out_what_only_a_trip_abroad_needs():
    start = date(2027, 4, 10)
    abroad_only = {t.title for t in TRIP.tasks if t.abroad}
    assert abroad_only == {"Check passport validity", "Check visa and entry requirements"}
    at_home = {task.title for task, _ in fit(TRIP.tasks, start, TODAY, domestic=True)}
    assert at_home == {t.title for t in TRIP.tasks} - abroad_only
    assert abroad_only <= {task.title for task, _ in fit(TRIP.tasks, start, TODAY)}  # abroad or unknown: kept


def test_a_move_far_ahead_still_starts_its_late_notice_two_days_after_the_plan():
    # late notice on a lease costs a month's rent: the quiet first week is for trips and the like
    fitted = {
        task.title: due
        for task, due in fit(PLAYBOOK.of_kind("move").tasks, TODAY + timedelta(days=35), TODAY, quiet=False)
    }
    assert fitted["Give notice on the current lease"] == TODAY + timedelta(days=2)
    calls = plan_calls(PLAYBOOK.of_kind("move"), "Move", None, None, TODAY + timedelta(days=35), TODAY, "", [], [])
    dues = {args["title"]: args["due"] for name, args in calls if name == "create_task"}
    assert dues["Give notice on the current lease"] == (TODAY + timedelta(days=2)).isoformat()
