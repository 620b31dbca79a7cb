"""The dashboard over real HTTP on loopback: access, CSRF, decisions through the gate, the input box."""

from __future__ import annotations

import re

import httpx

from channels.web import server
from channels.web.channel import ADDRESS_KEY, HEALTH_KEY, is_loopback, listening_socket
from storage import kv
from storage.models import Approval, ApprovalItem, DecisionRow, Inbox, Task
from tests.web_harness import base_url, csrf_of, logged_in, token_and_code

JAPAN = "I'm flying to Japan on 2027-04-10"


def propose(app, client: httpx.Client) -> Approval:
    """The user asks on the Conversation page; a proposal for that message reaches the gate, which
    presents it on the web channel (made here, so the test does not hang on a model's wording)."""
    from actors.proposals.make import propose
    from wilson.kernel.messages import ProposalCreated

    page = client.get("/conversation")
    answer = client.post("/conversation", data={"csrf": csrf_of(page.text), "key": "k1", "text": JAPAN})
    assert answer.status_code == 303
    assert app.wait_idle()
    row = Inbox.get((Inbox.source == "web") & (Inbox.text == JAPAN))
    approval = propose(row, [("create_task", {"title": "Book flights to Japan", "due": "2027-03-01"},
                                      "Create task: Book flights to Japan")], "web", app.clock.now(), app.config)
    app.supervisor.tell("approval", ProposalCreated(approval.id))
    assert app.wait_idle()
    return Approval.get_by_id(approval.id)


class Site:
    """Enough of a channel to build the route table."""

    name = "web"


def test_every_route_but_login_refuses_a_caller_without_the_token(web):
    routes = server.build(Site()).routes
    assert len(routes) >= 10
    checked = 0
    with httpx.Client(base_url=base_url(), timeout=10) as client:
        for route in routes:
            path = re.sub(r"\{\w+\}", "1", route.path)
            for method in sorted(route.methods - {"HEAD"}):
                answer = client.request(method, path, headers={"Authorization": "Bearer not-the-token"})
                plain = client.request(method, path)
                if route.path in server.PUBLIC:
                    assert answer.status_code != 500 and plain.status_code != 500
                    continue
                assert (answer.status_code, plain.status_code) == (401, 401), (method, path)
                checked += 1
    assert checked >= 10
    assert DecisionRow.select().count() == 0 and Inbox.select().count() == 0


def test_the_login_link_works_once_sets_a_strict_httponly_cookie_and_leaves_no_secret_behind(web):
    token, code = token_and_code(web)
    with httpx.Client(base_url=base_url(), timeout=10) as client:
        answer = client.get(f"/login?code={code}")
        assert answer.status_code == 303 and answer.headers["location"] == "/today"
        cookie = answer.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        today = client.get("/today")
        assert today.status_code == 200 and "Today" in today.text
        assert token not in today.text and code not in today.text
    with httpx.Client(base_url=base_url(), timeout=10) as stranger:
        assert stranger.get(f"/login?code={code}").status_code == 401  # spent
        assert stranger.post("/login", data={"token": "wrong"}).status_code == 401
        assert stranger.post("/login", data={"token": token}).status_code == 303
        assert stranger.get("/today").status_code == 200


def test_the_api_takes_the_bearer_token_and_a_new_token_ends_the_old_one(web):
    token, _ = token_and_code(web)
    with httpx.Client(base_url=base_url(), timeout=10) as client:
        answer = client.get("/api/today", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200 and "due" in answer.json()
        token_and_code(web)
        assert client.get("/api/today", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_a_state_change_without_the_session_csrf_token_or_from_another_site_is_refused(web):
    client = logged_in(web)
    approval = propose(web, client)
    csrf = csrf_of(client.get("/proposals").text)
    form = {"action": "approve", "nonce": approval.nonce}
    assert client.post(f"/proposals/{approval.id}", data=form).status_code == 403
    assert client.post(f"/proposals/{approval.id}", data={**form, "csrf": "forged"}).status_code == 403
    assert client.post(f"/proposals/{approval.id}", data={**form, "csrf": csrf},
                       headers={"Origin": "http://evil.example"}).status_code == 403
    assert client.post(f"/proposals/{approval.id}", data={**form, "csrf": csrf},
                       headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert web.wait_idle()
    assert DecisionRow.select().count() == 0
    assert Approval.get_by_id(approval.id).status == "pending"
    assert Task.select().count() == 0


def test_approving_twice_on_the_page_executes_the_proposal_once_through_the_gate(web):
    client = logged_in(web)
    approval = propose(web, client)
    assert approval.channel == "web"
    page = client.get("/proposals")
    assert f'id="proposal-{approval.id}"' in page.text
    form = {"csrf": csrf_of(page.text), "action": "approve", "nonce": approval.nonce}
    first = client.post(f"/proposals/{approval.id}", data=form)
    second = client.post(f"/proposals/{approval.id}", data=form)
    assert first.status_code == second.status_code == 303
    assert web.wait_idle()
    items = list(ApprovalItem.select().where(ApprovalItem.approval == approval.id))
    assert items and all(i.status == "executed" for i in items)
    assert Approval.get_by_id(approval.id).status == "approved"
    assert DecisionRow.select().where(DecisionRow.channel == "web").count() == 2
    tasks_made = [i for i in items if i.tool == "create_task"]
    assert Task.select().count() == len(tasks_made)
    after = client.get("/proposals").text
    assert "Done:" in after and "Already done" in after
    assert f'id="proposal-{approval.id}"' not in after


def test_reject_and_modify_go_to_the_gate_and_modify_needs_words(web):
    client = logged_in(web)
    approval = propose(web, client)
    csrf = csrf_of(client.get("/proposals").text)
    empty = client.post(f"/proposals/{approval.id}", data={"csrf": csrf, "action": "modify", "text": " "})
    assert empty.status_code == 400 and "what should change" in empty.text.lower()
    odd = client.post(f"/proposals/{approval.id}", data={"csrf": csrf, "action": "explode"})
    assert odd.status_code == 400
    assert client.post(f"/proposals/{approval.id}", data={"csrf": csrf, "action": "reject",
                                                         "nonce": approval.nonce}).status_code == 303
    assert web.wait_idle()
    assert Approval.get_by_id(approval.id).status == "rejected"
    assert Task.select().count() == 0


def test_a_message_typed_on_the_page_is_one_realtime_stimulus_and_the_answer_shows_there(web):
    client = logged_in(web)
    page = client.get("/conversation")
    form = {"csrf": csrf_of(page.text), "key": "same-form", "text": "<script>alert(1)</script> hello"}
    assert client.post("/conversation", data=form).status_code == 303
    assert client.post("/conversation", data=form).status_code == 303  # a double submit
    assert web.wait_idle()
    rows = list(Inbox.select().where(Inbox.source == "web"))
    assert len(rows) == 1 and rows[0].priority == 0 and rows[0].origin == "user"
    assert rows[0].user_id == web.config.get("core", "owner")
    shown = client.get("/conversation").text
    assert "<script>alert(1)</script>" not in shown and "&lt;script&gt;alert(1)&lt;/script&gt; hello" in shown
    data = client.get("/api/messages").json()
    assert [m["who"] for m in data["messages"]][0] == "you"
    assert any(m["who"] == "wilson" for m in data["messages"])  # Wilson's answer was delivered here
    later = client.get(f"/api/messages?after_in={data['after_in']}&after_out={data['after_out']}").json()
    assert later["messages"] == []


def test_the_api_refuses_oversize_and_malformed_bodies_with_a_clear_4xx(web):
    token, _ = token_and_code(web)
    bearer = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base_url(), timeout=10, headers=bearer) as client:
        big = client.post("/api/messages", content=b'{"text": "' + b"x" * 20000 + b'"}',
                          headers={"Content-Type": "application/json"})
        assert big.status_code == 413 and "too big" in big.json()["error"]
        assert client.post("/api/messages", content=b"{not json").status_code == 400
        assert client.post("/api/messages", json=["a list"]).status_code == 400
        assert client.post("/api/messages", json={"text": 5}).status_code == 400
        assert client.post("/api/messages", json={"text": " "}).status_code == 400
        assert client.post("/api/proposals/99999999999999999999", json={"action": "approve"}).status_code == 404
        ok = client.post("/api/messages", json={"text": "hello from a script", "key": "s1"})
        assert ok.status_code == 202 and isinstance(ok.json()["inbox"], int)
    assert web.wait_idle()
    assert Inbox.select().where(Inbox.source == "web").count() == 1


def test_today_shows_whats_due_and_overdue_and_waiting(web):
    client = logged_in(web)
    propose(web, client)
    page = client.get("/today").text
    assert re.search(r"1 proposal waiting", page)
    for section in ("briefing", "events", "due", "watched"):
        assert f'id="{section}"' in page


def test_the_dashboard_listens_on_loopback_by_default_and_says_so_when_it_does_not(web):
    assert web.config.get("web", "host") == "127.0.0.1"
    assert base_url().startswith("http://127.0.0.1:")
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.10") and not is_loopback("example.org")


def test_a_port_already_taken_is_one_error_and_wilson_runs_on(make_app):
    taken = listening_socket("127.0.0.1", 0)
    try:
        app = make_app(env={"WILSON_WEB_ENABLED": "true", "WILSON_WEB_PORT": str(taken.getsockname()[1])})
        assert app.supervisor.health["web"].state == "running"
        app.say("hello")
        assert app.wait_idle()
        assert kv.get_cursor(HEALTH_KEY)["state"] == "unavailable"  # said, in `wilson status`
        assert kv.get_setting(ADDRESS_KEY) is None  # and it listens nowhere else
    finally:
        taken.close()


def test_web_token_prints_the_token_then_a_login_link_and_stores_neither(web):
    from channels.web.cli import web_token
    from storage.models import Setting

    lines = web_token(web.config, web.clock.now())
    token, link = lines[0], lines[1]
    assert link.startswith(base_url() + "/login?code=")
    stored = " ".join(str(r.value) for r in Setting.select())
    assert token not in stored and link.rsplit("=", 1)[1] not in stored
    with httpx.Client(timeout=10) as client:
        assert client.get(link).status_code == 303
        assert client.get(base_url() + "/today").status_code == 200
    with httpx.Client(base_url=base_url(), timeout=10) as client:
        assert client.get("/api/today", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_a_dashboard_that_stopped_is_said_stopped_in_wilson_status(web):
    from channels import views

    app = web
    serving = kv.cursor_row(HEALTH_KEY)
    line = views.health_line("web", serving.value, serving.updated_at, app.config.timezone)
    assert line.startswith(f"web: serving at {base_url()} (as of ") and "{" not in line
    app.stop()
    app.db.connect(reuse_if_open=True)
    stopped = kv.cursor_row(HEALTH_KEY)
    assert stopped.value["state"] == "stopped"
    assert views.health_line("web", stopped.value, stopped.updated_at, app.config.timezone).startswith(
        "web: stopped (as of ")


def test_undo_typed_on_the_page_puts_back_the_last_approval_at_once(web):
    client = logged_in(web)
    approval = propose(web, client)
    page = client.get("/proposals")
    assert client.post(f"/proposals/{approval.id}", data={"csrf": csrf_of(page.text), "action": "approve",
                                                          "nonce": approval.nonce}).status_code == 303
    assert web.wait_idle()
    page = client.get("/conversation")
    form = {"csrf": csrf_of(page.text), "key": "k2", "text": "undo"}
    assert client.post("/conversation", data=form).status_code == 303
    assert web.wait_idle()
    undo = Approval.select().order_by(Approval.id.desc()).get()
    assert undo.id != approval.id and undo.channel == "web" and undo.status == "approved"  # no second approval
    assert {i.tool for i in undo.items} <= {"cancel_task", "close_topic"} and undo.items.count()
    assert not Inbox.select().where(Inbox.text == "undo").exists()  # handled by code, never by a model
    assert "Put back:" in client.get("/conversation").text
