"""The dashboard over real HTTP on loopback: access, CSRF, decisions through the gate, the input box."""

from __future__ import annotations

import re

import httpx

from channels.web import server
from channels.web.channel import ADDRESS_KEY, HEALTH_KEY, is_loopback, listening_socket
from storage import kv
from storage.models import Approval, ApprovalItem, DecisionRow, Inbox, Task
from tests.poll import wait_for
from tests.web_harness import base_url, csrf_of, logged_in, token_and_code
from tests.web_support import propose


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
    assert (
        client.post(
            f"/proposals/{approval.id}", data={**form, "csrf": csrf}, headers={"Origin": "http://evil.example"}
        ).status_code
        == 403
    )
    assert (
        client.post(
            f"/proposals/{approval.id}", data={**form, "csrf": csrf}, headers={"Sec-Fetch-Site": "cross-site"}
        ).status_code
        == 403
    )
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
    assert (
        client.post(
            f"/proposals/{approval.id}", data={"csrf": csrf, "action": "reject", "nonce": approval.nonce}
        ).status_code
        == 303
    )
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
        big = client.post(
            "/api/messages", content=b'{"text": "' + b"x" * 20000 + b'"}', headers={"Content-Type": "application/json"}
        )
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
    for section in ("timeline", "waiting", "briefing", "watched"):
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


def test_a_dashboard_nobody_opened_gives_its_port_back_when_wilson_stops(web):
    port = kv.get_setting(ADDRESS_KEY)["port"]  # listening, though no page was asked for (its server is not built)
    web.stop()
    again = listening_socket("127.0.0.1", port)  # the next Wilson's dashboard can have the port
    again.close()


def test_a_dashboard_that_cannot_be_built_at_its_first_connection_says_so_and_wilson_runs_on(web, monkeypatch):
    def broken(channel):
        raise RuntimeError("the page templates are missing")

    monkeypatch.setattr(server, "build", broken)  # built at the first connection, not at start
    try:
        httpx.get(base_url() + "/today", timeout=10)
    except httpx.TimeoutException:
        raise AssertionError("the connection was left waiting") from None
    except httpx.TransportError:
        pass  # refused
    else:
        raise AssertionError("a dashboard that could not be built answered")
    health = wait_for(lambda: (kv.get_cursor(HEALTH_KEY) or {}).get("error"), what="the dashboard's health")
    assert kv.get_cursor(HEALTH_KEY)["state"] == "unavailable" and "templates are missing" in health
    web.say("hello")
    assert web.wait_idle()


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
        "web: stopped (as of "
    )


def test_undo_typed_on_the_page_puts_back_the_last_approval_at_once(web):
    client = logged_in(web)
    approval = propose(web, client)
    page = client.get("/proposals")
    assert (
        client.post(
            f"/proposals/{approval.id}", data={"csrf": csrf_of(page.text), "action": "approve", "nonce": approval.nonce}
        ).status_code
        == 303
    )
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


def test_json_nested_5000_deep_or_with_a_lone_surrogate_is_a_clear_400_and_no_error_line(web):
    from loguru import logger

    token, _ = token_and_code(web)
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="ERROR")
    deep = b'{"text": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    try:
        with httpx.Client(
            base_url=base_url(),
            timeout=10,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        ) as client:
            answers = {
                "deep message": client.post("/api/messages", content=deep),
                "deep intake": client.post("/api/stimuli", content=deep),
                "deep event": client.post(
                    "/api/stimuli",
                    content=b'{"text": "a trip", "event": {"title": ' + b"[" * 3000 + b"]" * 3000 + b"}}",
                ),
                "surrogate message": client.post("/api/messages", content=b'{"text": "hi \\ud800 there"}'),
                "surrogate intake": client.post("/api/stimuli", content=b'{"text": "news", "title": "\\udfff"}'),
                "surrogate key": client.post("/api/stimuli", content=b'{"text": "news", "\\ud83d": 1}'),
            }
            long_number = client.post("/api/messages", content=b'{"text": ' + b"9" * 5000 + b"}")
            fine = client.post("/api/messages", json={"text": "hi \U0001f600 there", "key": "emoji"})
    finally:
        logger.remove(sink)
    for name, answer in answers.items():
        assert answer.status_code == 400, (name, answer.status_code, answer.text)
        said = answer.json()["error"]
        assert ("nested too deeply" in said) if name.startswith("deep") else ("lone surrogate" in said), (name, said)
    assert long_number.status_code == 400 and long_number.json()["error"] == "A number in the JSON is too long."
    assert lines == []
    assert fine.status_code == 202  # a real emoji (a surrogate pair in JSON's escapes) is fine
    assert web.wait_idle()
    assert [r.text for r in Inbox.select().where(Inbox.source == "web")] == ["hi \U0001f600 there"]


def test_200_half_sent_connections_make_room_for_the_dashboard_and_64_more_meet_the_header_deadline(web, monkeypatch):
    """A flood of half-sent connections: past MAX_CONNECTIONS each new one closes the oldest still waiting
    (told 503) and the user's request still gets in; the connections left are closed by the header
    deadline (told 408), no sooner and not much later.

    The two halves are apart, and each connection opens once the server has read the one before, so that
    neither depends on the machine's speed: with one 2 s deadline for both, a loaded machine took longer
    than that to open 64 connections, so the oldest were closed by the deadline instead of making room,
    and a close seen by the test only after the flood looked late. Times are the server's own, from when
    it began waiting for a connection's headers to when it closed it."""
    import socket

    from channels.web import protocol

    read: dict[int, bytes] = {}  # by the client's port: what the server read
    closed: dict[int, tuple[bytes, float | None]] = {}  # in order: its answer, and how long it had waited (a 408)
    reading, closing = protocol.DeadlineH11Protocol.data_received, protocol.DeadlineH11Protocol._close_with

    def data_received(self, data: bytes) -> None:
        read[self.client[1]] = read.get(self.client[1], b"") + data
        reading(self, data)

    def close_with(self, answer: bytes) -> None:
        waited = None if self.waiting_since is None else self.loop.time() - self.waiting_since
        closed.setdefault(self.client[1], (answer, waited))
        closing(self, answer)

    monkeypatch.setattr(protocol.DeadlineH11Protocol, "data_received", data_received)
    monkeypatch.setattr(protocol.DeadlineH11Protocol, "_close_with", close_with)
    token, _ = token_and_code(web)
    host, port = base_url()[len("http://") :].split(":")
    opened: list[socket.socket] = []  # all open until the end, so that no client port is used twice

    def half_sent(n: int, first: bytes = b"") -> socket.socket:
        sock = socket.create_connection((host, int(port)), timeout=10)
        opened.append(sock)
        if first:  # a keep-alive connection whose second request stops half-way has the same deadline
            sock.sendall(first)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        sent = first + (b"GET /today HTTP/1.1\r\nHost: x\r\n" if n % 2 else b"GE")  # never the blank line
        sock.sendall(sent[len(first) :])
        mine = sock.getsockname()[1]
        wait_for(lambda: read.get(mine) == sent, 10, f"the server to read connection {n}", every=0.001)
        return sock

    def told(sock: socket.socket) -> bytes:
        heard = b""
        while more := sock.recv(65536):
            heard += more
        return heard

    try:
        monkeypatch.setattr(protocol, "HEADER_SECONDS", 600.0)  # no deadline passes while the flood opens
        flood = [half_sent(n) for n in range(200)]
        ports = [sock.getsockname()[1] for sock in flood]
        room = len(flood) - protocol.MAX_CONNECTIONS
        assert list(closed) == ports[:room]  # the oldest waiting, in order, each as the one past the most came
        answer = httpx.get(base_url() + "/api/today", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert answer.status_code == 200 and "due" in answer.json()  # the flood does not keep the user out
        assert list(closed) == ports[: room + 1]  # the user's request made room too
        assert {closed[p][0] for p in closed} == {protocol.TOO_MANY}
        assert {told(sock) for sock in flood[: room + 1]} == {protocol.TOO_MANY}

        monkeypatch.setattr(protocol, "HEADER_SECONDS", 2.0)  # the default (10 s) would only make the test slow
        late = [half_sent(n) for n in range(protocol.MAX_CONNECTIONS - 1)]
        late.append(half_sent(1, first=b"GET /login HTTP/1.1\r\nHost: x\r\n\r\n"))
        late_ports = [sock.getsockname()[1] for sock in late]
        wait_for(lambda: all(p in closed for p in late_ports), 60, "the header deadline to close every connection")
        for sock, p in zip(late, late_ports):
            answer_sent, waited = closed[p]
            assert answer_sent == protocol.TIMED_OUT and told(sock).endswith(protocol.TIMED_OUT)
            assert waited is not None and protocol.HEADER_SECONDS - 0.01 <= waited < protocol.HEADER_SECONDS + 2
        answer = httpx.get(base_url() + "/api/today", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert answer.status_code == 200
    finally:
        for sock in opened:
            sock.close()


def test_a_body_that_stops_half_way_gets_a_408_within_its_deadline(web, monkeypatch):
    import socket
    import time

    from channels.web import forms

    monkeypatch.setattr(forms, "BODY_SECONDS", 1.0)
    token, _ = token_and_code(web)
    host, port = base_url()[len("http://") :].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            f"POST /api/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text": "hel'.encode()
        )
        started = time.monotonic()
        answer = sock.recv(65536)
        waited = time.monotonic() - started
        while b"too long" not in answer and (more := sock.recv(65536)):  # the body may come on its own
            answer += more
    assert answer.startswith(b"HTTP/1.1 408") and b"too long to arrive" in answer
    assert waited < forms.BODY_SECONDS + 2
    assert web.wait_idle()
    assert Inbox.select().count() == 0


def test_wilson_run_at_a_terminal_says_where_the_dashboard_is(tmp_path):
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    master, slave = pty.openpty()  # a terminal, as `make run` has
    env = {
        **os.environ,
        "WILSON_HOME": str(tmp_path / "home"),
        "WILSON_WEB_PORT": "0",
        "WILSON_TELEGRAM_TOKEN": "",
        "WILSON_LLM_BASE_URL": "",
    }
    child = subprocess.Popen([sys.executable, "bin/wilson", "run"], stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    said = b""
    try:
        deadline = time.monotonic() + 60
        while b"Wilson is listening" not in said and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                said += os.read(master, 4096)
        text = said.decode("utf-8", "replace")
        found = re.search(
            r"Your dashboard is at (http://127\.0\.0\.1:\d+) \(`wilson web-token` prints a link "
            r"that logs you in\)\.",
            text,
        )
        assert found, text
        assert text.index("Your dashboard") < text.index("Wilson is listening")
        assert httpx.get(found.group(1) + "/login", timeout=10).status_code == 200  # and there it is
        os.write(master, b"quit\n")
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()
        os.close(master)


def test_headers_that_arrive_in_pieces_within_the_deadline_are_answered(web, monkeypatch):
    import socket

    from channels.web import protocol

    received: list[bytes] = []  # what the server read, read by read
    reading = protocol.DeadlineH11Protocol.data_received

    def data_received(self, data: bytes) -> None:
        received.append(data)
        reading(self, data)

    monkeypatch.setattr(protocol.DeadlineH11Protocol, "data_received", data_received)
    host, port = base_url()[len("http://") :].split(":")
    pieces = (b"GET /login HT", b"TP/1.1\r\nHost: x\r\n", b"Accept: text/html\r\n", b"\r\n")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for n, piece in enumerate(pieces, 1):
            sock.sendall(piece)
            # the next piece only once the server has read this one: each arrives on its own, as from a slow client
            wait_for(lambda n=n: b"".join(received) == b"".join(pieces[:n]), 10, f"the server to read piece {n}")
        answer = sock.recv(65536)
    assert len(received) == len(pieces)  # four partial reads, the request whole only with the last
    assert answer.startswith(b"HTTP/1.1 200")  # not 408: a request in pieces is waited for within its deadline
