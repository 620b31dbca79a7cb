"""Today as the place to look, over real HTTP: the coming weeks' timeline, a topic's preparation as
progress, Done presses that take effect at once (traced, undoable), and what a newcomer met: a decided
proposal's buttons, the terminal missing from Conversation, a watched page both "not looked at yet" and
"looked", a Budget of "1 tokens"."""

from __future__ import annotations

import re
from datetime import timedelta

from storage import decisions, trace
from storage.models import Approval, DecisionRow, Inbox, Outbox, Task, TokenUsage
from tests.web_harness import csrf_of, logged_in
from tests.web_today_support import a_life


def test_today_shows_the_coming_weeks_day_by_day_with_events_deadlines_per_topic_and_what_waits(web):
    life = a_life(web)
    web.say("remind me to call Mum tomorrow at 10")  # a proposal left waiting
    assert web.wait_idle()
    client = logged_in(web)
    coming = client.get("/api/today").json()["timeline"]

    assert [p["first"] for p in coming["waiting"]] == ["Remind you once, Wed 6 Jan 2027 10:00: call Mum"]
    assert [(t["title"], t["late"]) for t in coming["overdue"]] == [("Give notice on the flat", "yesterday")]
    days = [
        (day["label"], [(e["kind"], e["text"], [t["title"] for t in e["tasks"]]) for e in day["entries"]])
        for week in coming["weeks"]
        for day in week["days"]
    ]
    assert days == [
        ("Tue 05 Jan", [("due", "", ["Water the plants"])]),
        ("Fri 08 Jan", [("due", "Move to Hamburg", ["Book the van"])]),
        ("Wed 13 Jan", [("event", "Dentist", [])]),
        ("Fri 22 Jan", [("due", "Move to Hamburg", ["Pack the kitchen"])]),
        ("Mon 25 Jan", [("starts", "Move to Hamburg begins", [])]),
    ]
    assert [w["label"] for w in coming["weeks"]] == [
        "This week",
        "Next week",
        "Week of 18 Jan",
        "Week of 25 Jan",
        "01 Feb – 14 Feb",
    ]  # quiet weeks in a row are one line
    assert [(e["text"], e["away"], e["open"]) for e in coming["later"]] == [("Trip to Japan begins", "in 14 weeks", 1)]
    assert "Book flights" not in str(coming["weeks"])  # due after the window: counted under its topic, later

    page = client.get("/today").text
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.split('id="timeline"', 1)[1].split("</section>", 1)[0]))
    for line in (
        "1 proposal waiting for your answer",
        "Give notice on the flat Move to Hamburg · due Mon 04 Jan, yesterday",
        "Tue 05 Jan today due Water the plants 17:00",
        "Fri 08 Jan in 3 days due Move to Hamburg: Book the van",
        "Wed 13 Jan in 8 days event 10:30 Dentist (Dr. Weber)",
        "Mon 25 Jan in 3 weeks begins Move to Hamburg begins 3 tasks still open",
        "Sat 10 Apr in 14 weeks begins Trip to Japan begins · 1 task still open",
    ):
        assert line in text, (line, text)
    assert text.index("Tue 05 Jan") < text.index("Fri 08 Jan") < text.index("Wed 13 Jan") < text.index("Sat 10 Apr")
    assert life["boxes"].title not in text  # done: not on the way ahead


def test_a_topic_page_shows_its_preparation_done_open_and_overdue_against_the_event(web):
    life = a_life(web)
    client = logged_in(web)
    page = client.get(f"/topics/{life['move'].id}")
    assert page.status_code == 200
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page.text.split("<main>", 1)[1]))
    assert "1 of 4 done · 1 overdue · 2 open · Move to Hamburg in 3 weeks (Mon 25 Jan 2027)" in words
    rows = re.findall(r'<tr class="task (\w+)" id="task-(\d+)">', page.text)
    assert rows == [
        ("done", str(life["boxes"].id)),
        ("overdue", str(life["notice"].id)),
        ("open", str(life["van"].id)),
        ("open", str(life["kitchen"].id)),
    ]
    assert f'id="done-{life["boxes"].id}"' not in page.text  # nothing to press on what is done
    assert all(f'id="done-{life[k].id}"' in page.text for k in ("notice", "van", "kitchen"))
    # on the line from when the topic began to its event: overdue before today, open after, the event at the end
    spots = {state: float(x) for state, x in re.findall(r'<span class="dot (\w+)" style="left: ([\d.]+)%"', page.text)}
    today = float(re.search(r'class="mark now[^"]*" style="left: ([\d.]+)%"', page.text).group(1))
    event = float(re.search(r'class="mark event[^"]*" style="left: ([\d.]+)%"', page.text).group(1))
    assert spots["done"] < spots["overdue"] < today < event == 100.0
    assert "Trip to Japan" not in page.text  # one topic on its page
    assert client.get("/topics/999999").status_code == 404


def test_done_on_a_task_takes_effect_at_once_is_traced_and_offers_undo(web):
    life = a_life(web)
    client = logged_in(web)
    page = client.get(f"/topics/{life['move'].id}").text
    form = {"csrf": csrf_of(page), "key": "press-1", "back": f"/topics/{life['move'].id}"}
    pressed = client.post(f"/tasks/{life['van'].id}/done", data=form)
    assert pressed.status_code == 303 and pressed.headers["location"].startswith(f"/topics/{life['move'].id}?done=")
    again = client.post(f"/tasks/{life['van'].id}/done", data=form)  # a double submit
    assert again.headers["location"] == pressed.headers["location"]
    assert web.wait_idle()

    assert Task.get_by_id(life["van"].id).status == "done"  # no second approval asked for
    approval = Approval.get(Approval.idempotency_key == "web:done:press-1")
    assert approval.status == "approved"
    assert DecisionRow.select().where(DecisionRow.approval_id == approval.id).count() == 1
    assert Approval.select().where(Approval.status.in_(("pending", "partial"))).count() == 0
    stages = [(r.stage, r.reason) for r in trace.path(approval.trace_id)]
    assert ("proposed", f"proposal {approval.id}: you pressed Done on the dashboard") in stages
    assert ("approved", f"proposal {approval.id} approve by owner: Done:") in stages
    receipt = Outbox.get(Outbox.trace_id == approval.trace_id)
    assert receipt.channel == "web" and "✓ Mark done: Book the van" in receipt.text
    assert receipt.payload["undo"]["id"] == approval.id  # the receipt offers to put it back

    shown = client.get(pressed.headers["location"]).text
    notice = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", shown.split('id="done-notice"', 1)[1].split("</section>")[0]))
    assert "Book the van is done." in notice and "Undo" in notice
    assert "2 of 4 done" in re.sub(r"<[^>]+>", "", shown)
    refused = client.post(f"/tasks/{life['van'].id}/done", data={**form, "key": "press-2"})
    assert refused.status_code == 400 and "“Book the van” is done already" in refused.text

    undone = client.post(f"/undo/{approval.id}", data={"csrf": form["csrf"]})
    assert undone.status_code == 303
    assert web.wait_idle()
    # the gate's undo: the task open again, or a proposal to put it back (how undo is answered is its own)
    back = Approval.select().where(Approval.status.in_(("pending", "partial"))).first()
    assert Task.get_by_id(life["van"].id).status == "open" or (
        back is not None and any("Book the van" in i.description for i in back.items)
    )


def test_a_proposal_answered_but_not_yet_applied_shows_no_buttons_and_conversation_says_how_it_was_decided(web):
    client = logged_in(web)
    web.say("remind me to call Mum tomorrow at 10")
    assert web.wait_idle()
    approval = Approval.get()
    # the answer is written down; the gate has not applied it yet (it is told after the commit)
    decisions.record(
        approval_id=approval.id,
        action="approve",
        user_id=web.config.get("core", "owner"),
        channel="web",
        at=web.clock.now(),
        nonce=approval.nonce,
    )
    page = client.get("/proposals").text
    card = page.split(f'id="proposal-{approval.id}"', 1)[1].split("</section>", 1)[0]
    assert "You answered: approve. Wilson is on it" in card
    assert 'name="approve"' not in card and 'name="reject"' not in card and 'name="modify"' not in card

    from wilson.kernel.messages import DecisionRecorded

    web.supervisor.tell("approval", DecisionRecorded(DecisionRow.get().id))
    assert web.wait_idle()
    talk = client.get("/conversation").text
    assert f"Proposal {approval.id}: approved." in talk and "Answer on Proposals" not in talk


def test_conversation_shows_what_was_said_at_the_terminal_too_and_where(web):
    web.say("what is due this week?")  # typed at the terminal
    assert web.wait_idle()
    client = logged_in(web)
    data = client.get("/api/messages").json()
    said = [(m["who"], m["where"]) for m in data["messages"]]
    assert said[0] == ("you", "at the terminal") and ("wilson", "at the terminal") in said
    page = client.get("/conversation").text
    assert "what is due this week?" in page and "you, at the terminal" in page


def test_a_watched_page_that_was_looked_at_never_also_says_not_looked_at_yet(web):
    from channels.web import watcher

    now = web.clock.now()
    watcher.add("https://example.org/visa", timedelta(hours=6), now)
    fresh = watcher.view(watcher.sources()[0], web.config.timezone)
    assert fresh["kind"] == "not looked at yet" and fresh["checked"] == ""
    state = {**watcher.sources()[0], "checked_at": now.isoformat(), "error": "robots.txt asks robots to stay away"}
    looked = watcher.view(state, web.config.timezone)
    assert looked["kind"] == "" and looked["checked"] == "Tue 05 Jan 08:00"
    page = logged_in(web).get("/today").text
    assert "not looked at yet" in page and "looked Tue" not in page  # the fresh one, said once


def test_budget_with_no_model_use_says_so_instead_of_the_highest_day_1_tokens(web):
    client = logged_in(web)
    page = client.get("/budget").text
    assert "No model was used in the last 14 days, so nothing was spent." in page
    assert "1 tokens" not in page and "<svg" not in page
    TokenUsage.create(
        day=web.clock.now().date().isoformat(), role="deep", calls=1, prompt_tokens=900, completion_tokens=100
    )
    used = client.get("/budget").text
    assert "(the highest day: 1,000 tokens)" in used and "<svg" in used


def test_done_on_todays_timeline_returns_to_today_with_the_task_off_the_overdue_list(web):
    life = a_life(web)
    client = logged_in(web)
    page = client.get("/today").text
    assert f'id="done-{life["notice"].id}"' in page.split('id="overdue"', 1)[1].split("</div>", 1)[0]
    pressed = client.post(
        f"/tasks/{life['notice'].id}/done", data={"csrf": csrf_of(page), "key": "t1", "back": "/today"}
    )
    assert pressed.status_code == 303 and pressed.headers["location"].startswith("/today?done=")
    assert web.wait_idle()
    after = client.get(pressed.headers["location"]).text
    assert 'id="overdue"' not in after  # nothing is overdue any more
    assert "Give notice on the flat</strong> is done." in after
    elsewhere = client.post(
        f"/tasks/{life['van'].id}/done", data={"csrf": csrf_of(page), "key": "t2", "back": "https://evil.example/"}
    )
    assert elsewhere.headers["location"].startswith("/topics?done=")  # only back to a page of its own


def test_a_snooze_press_sent_twice_snoozes_once_and_a_press_on_nothing_says_so(web):
    life = a_life(web)
    client = logged_in(web)
    page = client.get("/today").text
    assert f'id="snooze-{life["notice"].id}"' in page.split('id="overdue"', 1)[1].split("</div>", 1)[0]
    form = {"csrf": csrf_of(page), "key": "s1", "back": "/today"}
    pressed = client.post(f"/tasks/{life['notice'].id}/snooze", data=form)
    again = client.post(f"/tasks/{life['notice'].id}/snooze", data=form)  # a double submit
    assert pressed.status_code == 303 and again.headers["location"] == pressed.headers["location"]
    assert pressed.headers["location"].startswith("/today?did=")
    assert web.wait_idle()
    assert DecisionRow.select().where(DecisionRow.text.startswith("snooze")).count() == 1
    assert Task.get_by_id(life["notice"].id).status == "snoozed"

    gone = client.post("/tasks/999999/snooze", data={**form, "key": "s2", "back": "https://evil.example/"})
    assert gone.headers["location"].startswith("/today?did=")  # only back to a page of its own
    assert web.wait_idle()
    told = client.get(gone.headers["location"]).text
    assert "I have no task 999999 (`tasks` lists them)." in told.split('id="command-notice"', 1)[1]

    done = client.post(f"/tasks/{life['boxes'].id}/help", data={**form, "key": "h1"})
    assert done.status_code == 400 and "“Order boxes” is done already." in done.text
    typed = client.post("/conversation", data={"csrf": form["csrf"], "key": "c1", "text": f"help {life['van'].id}"})
    assert typed.status_code == 303
    assert web.wait_idle()
    asked = Inbox.select().order_by(Inbox.id.desc()).get()
    assert asked.text == "Help me with Book the van (due Fri 8 Jan, for Move to Hamburg)." and asked.source == "web"
