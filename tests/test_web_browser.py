"""The dashboard in a real headless Chromium (Debian's chromium and chromedriver, driven by Selenium):
log in with the token, see Today, approve a proposal on Proposals, see the gate's answer; a calendar
event posted to the intake API becomes a proposal, one item of which is approved on its own; a page
watched through the dashboard changes and reaches the buffer once; a page rendered to a PNG as
`make screenshots` does; Today's timeline read at a glance, a topic's progress, and one Done press.
One browser serves the whole module."""

from __future__ import annotations

import os
from datetime import timedelta

import httpx
import pytest

from storage.models import Approval, ApprovalItem, ReceptorBuffer, Task, Topic
from tests.web_support import propose
from tests.web_harness import (
    VIEWPORT,
    LoopbackSite,
    base_url,
    browser_login,
    chromium,
    chromium_paths,
    logged_in,
    shoot,
    token_and_code,
)

CHROMIUM, DRIVER = chromium_paths()
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver (.ci/run installs them)"
)


@pytest.fixture(scope="module")
def shared_browser(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chromium")
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)  # each session leaves a folder behind in TMPDIR
    driver = chromium(folder / "profile")
    yield driver
    driver.quit()
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before


@pytest.fixture
def browser(shared_browser):
    """The module's browser with no cookies from the test before (each test runs its own Wilson)."""
    shared_browser.delete_all_cookies()
    shared_browser.get("about:blank")
    return shared_browser


def test_log_in_with_the_token_see_today_and_approve_a_proposal(web, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    approval = propose(web, logged_in(web))
    token, _ = token_and_code(web)
    wait = WebDriverWait(browser, 15)

    browser.get(base_url() + "/today")
    assert "Please log in" in browser.page_source
    browser.get(base_url() + "/login")
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click()
    wait.until(seen.presence_of_element_located((By.ID, "briefing")))
    assert browser.current_url.endswith("/today") and token not in browser.current_url
    assert "1 proposal waiting" in browser.find_element(By.TAG_NAME, "main").text
    cookie = browser.get_cookie("wilson_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"

    browser.find_element(By.LINK_TEXT, "Proposals (1)").click()
    card = wait.until(seen.presence_of_element_located((By.ID, f"proposal-{approval.id}")))
    items = list(ApprovalItem.select().where(ApprovalItem.approval == approval.id).order_by(ApprovalItem.position))
    shown = " ".join(card.text.split())
    assert all(" ".join(i.description.split())[:40] in shown for i in items)
    card.find_element(By.NAME, "approve").click()
    wait.until(seen.presence_of_element_located((By.ID, "sent")))
    assert web.wait_idle()
    browser.refresh()
    answers = wait.until(seen.presence_of_element_located((By.ID, "answers")))
    assert "Done:" in answers.text and " ".join(items[0].description.split())[:40] in " ".join(answers.text.split())
    assert not browser.find_elements(By.ID, f"proposal-{approval.id}")
    assert Approval.get_by_id(approval.id).status == "approved"
    assert {i.status for i in ApprovalItem.select().where(ApprovalItem.approval == approval.id)} == {"executed"}
    assert Task.select().count() == sum(1 for i in items if i.tool == "create_task")  # once each, nothing else


def test_a_message_typed_in_conversation_gets_its_answer_without_a_reload(web, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    _, code = token_and_code(web)
    wait = WebDriverWait(browser, 15)
    browser.get(base_url() + f"/login?code={code}")
    wait.until(seen.presence_of_element_located((By.ID, "briefing")))
    browser.get(base_url() + "/conversation")
    box = browser.find_element(By.NAME, "text")
    box.send_keys("hello there")
    browser.find_element(By.NAME, "send").click()
    wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, ".msg.you")))
    marker = browser.find_element(By.ID, "messages")
    browser.execute_script("arguments[0].setAttribute('data-page', 'same')", marker)
    assert web.wait_idle()
    wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, ".msg.wilson")))
    # the answer arrived on the same page (the mark set after loading is still there): no reload
    assert browser.find_element(By.ID, "messages").get_attribute("data-page") == "same"


def test_a_page_renders_to_a_png_of_the_fixed_viewport_as_make_screenshots_does(web, browser, tmp_path):
    import struct

    browser_login(browser, web)
    png = shoot(browser, "/budget", tmp_path / "budget.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and (tmp_path / "budget.png").read_bytes() == png
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (width, height) == VIEWPORT
    assert len(png) > 10_000  # a rendered page with text and a chart, not a blank image


def test_the_trace_page_explains_why_a_newsletter_was_dropped(web, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    row = web.inject_buffered(
        "email",
        "Weekly deals newsletter: 20% off everything this week. Unsubscribe here.",
        payload={"from": "deals@shop.example", "subject": "Weekly deals", "bulk": True},
    )
    web.sync()
    assert web.wait_idle()
    browser_login(browser, web)
    browser.find_element(By.LINK_TEXT, "Trace").click()
    WebDriverWait(browser, 15).until(seen.presence_of_element_located((By.ID, "recent")))
    browser.find_element(By.LINK_TEXT, row.trace_id).click()
    path = WebDriverWait(browser, 15).until(seen.presence_of_element_located((By.ID, "path")))
    rows = path.find_elements(By.CSS_SELECTOR, "tr.step")
    assert [r.get_attribute("data-stage") for r in rows] == ["routed", "dropped"]
    # what happened and why, in words (the recorded shorthand stays underneath, small and grey)
    words = [" ".join(r.find_element(By.CSS_SELECTOR, ".step-words").text.split()) for r in rows]
    assert [r.find_element(By.TAG_NAME, "strong").text for r in rows] == ["Received", "Set aside"]
    assert words[0].startswith("Kept with the other news until Wilson next goes through it")
    assert words[1].startswith("Not worth telling you: bulk mail (a newsletter")
    assert "Weekly deals newsletter" in path.text


def test_a_calendar_event_posted_to_the_intake_api_is_proposed_and_one_item_approved_makes_that_task_only(web, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    token, _ = token_and_code(web)
    event = {"title": "Trip to Japan", "start": "2027-04-10", "end": "2027-04-24", "location": "Tokyo"}
    posted = httpx.post(
        base_url() + "/api/stimuli",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
        json={"text": "Trip to Japan, Tokyo, 10-24 April", "source": "shortcut", "key": "trip-1", "event": event},
    )
    assert posted.status_code == 202, posted.text
    assert web.wait_idle()
    assert Approval.select().count() == 0  # buffered: nothing before the sync
    web.sync()
    assert web.wait_idle()

    browser_login(browser, web)
    wait = WebDriverWait(browser, 15)
    browser.find_element(By.LINK_TEXT, "Proposals (1)").click()
    approval = Approval.get()
    card = wait.until(seen.presence_of_element_located((By.ID, f"proposal-{approval.id}")))
    assert "Trip" in card.text and "Book flights" in card.text
    flights = next(i for i in approval.items if i.tool == "create_task" and "Book flights" in i.description)
    others = [i.position for i in approval.items if i.position != flights.position]
    card.find_element(By.ID, f"approve-{approval.id}-{flights.position}").click()
    wait.until(seen.presence_of_element_located((By.ID, "sent")))
    assert web.wait_idle()

    assert [t.title for t in Task.select()] == ["Book flights"]  # that task, and nothing else
    assert Topic.select().count() == 0
    assert Approval.get_by_id(approval.id).status == "partial"
    assert {i.position: i.status for i in ApprovalItem.select().where(ApprovalItem.approval == approval.id)} == {
        flights.position: "executed",
        **{p: "pending" for p in others},
    }
    browser.refresh()
    card = wait.until(seen.presence_of_element_located((By.ID, f"proposal-{approval.id}")))
    assert "(executed)" in browser.find_element(By.ID, f"item-{approval.id}-{flights.position}").text
    assert not card.find_elements(By.ID, f"approve-{approval.id}-{flights.position}")
    assert card.find_elements(By.ID, f"approve-{approval.id}-{others[-1]}")  # the rest can still be decided

    browser.find_element(By.LINK_TEXT, "Topics").click()
    loose = wait.until(seen.presence_of_element_located((By.ID, "loose")))
    assert [r.find_element(By.TAG_NAME, "td").text for r in loose.find_elements(By.CSS_SELECTOR, "tr")] == [
        "Book flights"
    ]
    assert "Trip to Japan" in browser.find_element(By.TAG_NAME, "main").text  # still proposed, not made


def test_a_page_watched_through_the_dashboard_changes_and_reaches_the_buffer_once(web, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    from channels.web import watcher

    page = (
        "<html><head><title>Visa for Japan</title></head><body><main><h1>Visa for Japan</h1>"
        "<p>Short stays need no visa for up to 90 days.</p>{}</main></body></html>"
    )
    wait = WebDriverWait(browser, 15)

    def watched_rows() -> list[ReceptorBuffer]:
        return list(
            ReceptorBuffer.select().where(
                (ReceptorBuffer.channel == "web") & ~ReceptorBuffer.dedup_key.startswith("web:intake:")
            )
        )

    with LoopbackSite() as site:
        site.put("/visa", page.format(""))
        url = site.url("/visa")
        browser_login(browser, web)
        browser.find_element(By.NAME, "url").send_keys(url)
        browser.find_element(By.NAME, "every").send_keys("1h")
        browser.find_element(By.NAME, "watch").click()
        card = wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "section.proposal")))
        assert f"Watch {url}" in card.text
        assert watcher.sources() == []  # nothing watched before the approval
        card.find_element(By.NAME, "approve").click()
        wait.until(seen.presence_of_element_located((By.ID, "sent")))
        assert web.wait_idle()
        assert [s["url"] for s in watcher.sources()] == [url]

        web.sync()  # the first look: what the page says now is the baseline, not news
        assert web.wait_idle()
        assert site.asked("/visa") == 1 and watched_rows() == []

        site.put("/visa", page.format("<p>From 1 March 2027 travellers fill in an online form before departure.</p>"))
        web.advance(timedelta(hours=1, minutes=1))
        assert web.wait_idle()
        rows = watched_rows()
        assert site.asked("/visa") == 2 and len(rows) == 1
        assert "online form" in rows[0].text

        web.advance(timedelta(hours=1, minutes=1))  # the next look finds the same page
        assert web.wait_idle()
        assert site.asked("/visa") == 3 and len(watched_rows()) == 1

    browser.get(base_url() + "/today")
    seen_box = wait.until(seen.presence_of_element_located((By.ID, "seen")))
    assert "online form" in seen_box.text


def test_today_reads_the_coming_weeks_at_a_glance_and_a_topics_progress_takes_one_press_to_move(web, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.web_today_support import a_life

    life = a_life(web)
    browser_login(browser, web)
    wait = WebDriverWait(browser, 15)
    timeline = browser.find_element(By.ID, "timeline")
    # the first screen holds what is late and this week: no scrolling to see what matters today
    overdue = browser.find_element(By.ID, "overdue")
    today = browser.find_element(By.CSS_SELECTOR, ".tl-day.today")
    assert timeline.rect["y"] < 200 and today.rect["y"] + today.rect["height"] <= VIEWPORT[1]
    assert "Give notice on the flat" in overdue.text and "yesterday" in overdue.text
    assert (
        overdue.find_element(By.CSS_SELECTOR, ".tag").value_of_css_property("background-color")
        == "rgba(179, 45, 46, 1)"
    )  # red
    assert today.value_of_css_property("background-color") == "rgba(252, 249, 232, 1)"  # marked
    days = [" ".join(d.text.split()) for d in timeline.find_elements(By.CSS_SELECTOR, ".tl-week .tl-day")]
    assert days == [
        "Tue 05 Jan today DUE Water the plants 17:00 ✓ Done Snooze a day",
        "Fri 08 Jan in 3 days DUE Move to Hamburg: Book the van",
        "Wed 13 Jan in 8 days EVENT 10:30 Dentist (Dr. Weber)",
        "Fri 22 Jan in 2 weeks DUE Move to Hamburg: Pack the kitchen",
        "Mon 25 Jan in 3 weeks BEGINS Move to Hamburg begins 3 tasks still open",
        "Sat 10 Apr in 14 weeks BEGINS Trip to Japan begins · 1 task still open",
    ]

    browser.find_element(By.LINK_TEXT, "Move to Hamburg begins").click()
    progress = wait.until(seen.presence_of_element_located((By.ID, f"progress-{life['move'].id}")))
    assert progress.find_element(By.CSS_SELECTOR, ".progress-words").text.startswith(
        "1 of 4 done · 1 overdue · 2 open · Move to Hamburg in 3 weeks"
    )
    bar = progress.find_element(By.CSS_SELECTOR, ".bar").rect["width"]
    widths = {
        state: progress.find_element(By.CSS_SELECTOR, f".seg.{state}").rect["width"] / bar
        for state in ("done", "overdue", "open")
    }
    assert abs(widths["done"] - 0.25) < 0.01 and abs(widths["overdue"] - 0.25) < 0.01
    assert abs(widths["open"] - 0.5) < 0.01
    now_x = progress.find_element(By.CSS_SELECTOR, ".mark.now").rect["x"]
    event_x = progress.find_element(By.CSS_SELECTOR, ".mark.event").rect["x"]
    late = progress.find_element(By.CSS_SELECTOR, ".dot.overdue").rect
    ahead = [d.rect for d in progress.find_elements(By.CSS_SELECTOR, ".dot.open")]
    assert late["x"] + late["width"] / 2 < now_x < min(d["x"] for d in ahead) <= max(d["x"] for d in ahead) < event_x

    browser.find_element(By.ID, f"done-{life['van'].id}").click()  # one press
    notice = wait.until(seen.presence_of_element_located((By.ID, "done-notice")))
    assert web.wait_idle()
    browser.refresh()
    notice = wait.until(seen.presence_of_element_located((By.ID, "done-notice")))
    assert notice.text.startswith("Book the van is done.") and notice.find_elements(By.NAME, "undo")
    row = browser.find_element(By.ID, f"task-{life['van'].id}")
    assert "done" in row.get_attribute("class").split() and not row.find_elements(By.TAG_NAME, "button")
    words = browser.find_element(By.CSS_SELECTOR, ".progress-words").text
    assert words.startswith("2 of 4 done · 1 overdue · 1 open")
    assert Task.get_by_id(life["van"].id).status == "done"
    assert "Proposals (" not in browser.find_element(By.TAG_NAME, "header").text  # nothing asked a second time


def test_snooze_stop_and_help_me_on_the_dashboard_each_take_one_press_and_ask_nothing_twice(web, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    from storage.models import Schedule
    from tests.web_today_support import a_life

    life = a_life(web)
    pills = Schedule.create(
        name="reminder:pills",
        cron="0 8 * * *",
        kind="reminder",
        text="take my pills",
        timezone=str(web.config.timezone),
        next_fire_at=web.clock.now() + timedelta(days=1),
    )
    browser_login(browser, web)
    wait = WebDriverWait(browser, 15)

    def notice_after_press(button_id: str) -> str:
        browser.find_element(By.ID, button_id).click()  # one press
        wait.until(seen.presence_of_element_located((By.ID, "command-notice")))
        assert web.wait_idle()
        browser.refresh()
        return " ".join(wait.until(seen.presence_of_element_located((By.ID, "command-notice"))).text.split())

    notice = notice_after_press(f"snooze-{life['notice'].id}")
    assert notice.startswith("Done: ✓ Snooze: Give notice on the flat until Wed 6 Jan 2027") and "Undo" in notice
    assert not browser.find_elements(By.ID, "overdue")  # asleep until tomorrow: nothing is overdue today
    assert Task.get_by_id(life["notice"].id).status == "snoozed"

    reminders = browser.find_element(By.ID, "reminders")
    assert "take my pills" in reminders.text and "Stop reminding" in reminders.text
    notice = notice_after_press(f"stop-{pills.id}")
    assert notice.startswith("Done: ✓ Stop reminder: take my pills")
    assert not browser.find_elements(By.ID, "reminders") and not Schedule.get_by_id(pills.id).enabled
    assert "Proposals (" not in browser.find_element(By.TAG_NAME, "header").text  # nothing asked a second time

    browser.find_element(By.ID, "command-notice").find_element(By.NAME, "undo").click()  # Undo puts it back
    wait.until(lambda driver: driver.current_url.endswith("/proposals"))
    assert web.wait_idle()
    assert Schedule.get(Schedule.text == "take my pills", Schedule.enabled == True).cron == "0 8 * * *"

    browser.get(base_url() + f"/topics/{life['move'].id}")
    van = wait.until(seen.presence_of_element_located((By.ID, f"task-{life['van'].id}")))
    assert [b.text for b in van.find_elements(By.TAG_NAME, "button")] == ["✓ Done", "Snooze a day", "Help me"]
    browser.find_element(By.ID, f"help-{life['van'].id}").click()
    wait.until(seen.presence_of_element_located((By.ID, "messages")))
    assert browser.current_url.endswith("/conversation")
    assert web.wait_idle()
    wait.until(lambda driver: driver.find_elements(By.CSS_SELECTOR, ".msg.wilson"))
    asked = " ".join(browser.find_element(By.CSS_SELECTOR, ".msg.you").text.split())
    assert "Help me with Book the van (due Fri 8 Jan, for Move to Hamburg)." in asked
    assert Task.get_by_id(life["van"].id).status == "open"  # a question to Wilson, not a change
