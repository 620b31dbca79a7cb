"""The dashboard's HTTP side: a Starlette app served by uvicorn on the web channel's loop.

Every route but /login needs the user: a session cookie (set by logging in) or
`Authorization: Bearer <token>`. `guard` is applied to each route where the route table
is built, and tests walk that table, so a route cannot be added without it (what
it checks, and how a body is read, is channels/web/forms.py).

State changes (approve, reject, modify, a message, log out) are POSTs. From a browser
session each one carries the session's CSRF token, and a request a browser marks as
cross-site (Sec-Fetch-Site, or an Origin that is not this server) is refused outright.
Bearer calls need no CSRF token: a browser never attaches that header on its own.

Handlers are coroutines that read and write the database on the loop's own thread (one
connection, like the Telegram channel's updates) and cross into the actors only with
`tell`, after their commit. A decision goes through the same path as a Telegram button:
a decision row, then `DecisionRecorded` to the gate, which applies it exactly once.

Size: one short module-level handler per route and the one route table that lists them all with their
guard; the pages' content is built in channels/web/pages.py, so what is left here is the HTTP surface, read
top to bottom in one place.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from loguru import logger
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from actors import tools
from actors.proposals import commands
from channels import views
from channels.web import auth, pages
from storage.beliefs import behaviour_changes
from channels.web.forms import (
    COOKIE,
    Refused,
    Who,
    calendar_event,
    clean,
    cross_site,
    identify,
    item_positions,
    read_form,
    read_json,
    refusal,
)
from wilson.kernel.bounds import MAX_ID

STATIC = Path(__file__).resolve().parent / "static"
INTAKE_TEXT = 8000  # characters of one item posted to /api/stimuli (the body is capped at MAX_BODY too)
PUBLIC = {"/login"}  # the only routes reachable without the user
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; "
    "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer would make browsers send "Origin: null" with forms
    "Cache-Control": "no-store",
}


class Delegated(Response):
    """A response that hands the request on to another ASGI app (the MCP SDK's endpoint), with this server's
    security headers added to what that app answers."""

    def __init__(self, app):
        super().__init__()
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        extra = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in SECURITY_HEADERS.items()]

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, sending)


def guard(site, handler, *, public: bool = False, changes: bool = False):
    """The route's handler behind the checks every route passes: who asks, from where, with which form token."""

    async def guarded(request: Request) -> Response:
        try:
            now = site.now()
            if changes and cross_site(request):
                raise Refused(403, "Refused: this request came from another site.")
            who = identify(request, now)
            if who is None and not public:
                raise Refused(401, "Please log in first.", login=True)
            if changes and who is not None and who.how == "session":
                sent = request.headers.get("x-csrf-token")
                if sent is None:
                    form = await read_form(request)
                    request.state.form = form
                    sent = form.get("csrf")
                if not auth.csrf_ok(who.record, sent):
                    raise Refused(403, "Refused: this form is out of date. Reload the page and try again.")
            response = await handler(site, request, who, now)
        except Refused as exc:
            response = refusal(request, exc.status, exc.text, exc.login)
        except Exception as exc:  # a bug in one page must not take the server down, nor show a trace
            logger.error("web {} {} failed: {}: {}", request.method, request.url.path, type(exc).__name__, exc)
            response = refusal(request, 500, "Sorry, something went wrong on my side.")
        response.headers.update(SECURITY_HEADERS)
        return response

    guarded.public = public
    return guarded


def page(name: str, who: Who | None, now, nav: str, **context) -> HTMLResponse:
    waiting = pages.waiting_count() if nav else 0
    return HTMLResponse(pages.render(name, nav=nav, csrf=who.csrf if who else "", waiting=waiting, **context))


async def form_of(request: Request) -> dict:
    return getattr(request.state, "form", None) or await read_form(request)


# Logging in and out -------------------------------------------------------------------------
async def login_page(site, request: Request, who, now) -> Response:
    code = request.query_params.get("code")
    if code is not None:
        if not auth.use_login_code(code, now):
            return HTMLResponse(
                pages.render(
                    "login.html",
                    title="Log in",
                    nav=None,
                    problem="That login link was used already or has run out. "
                    "Run wilson web-token for a new one, or paste the token.",
                ),
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="wilson"'},
            )
        return logged_in(now)
    if who is not None:
        return RedirectResponse("/today", status_code=303)
    return HTMLResponse(pages.render("login.html", title="Log in", nav=None, problem=None))


async def login(site, request: Request, who, now) -> Response:
    if cross_site(request):
        raise Refused(403, "Refused: this request came from another site.")
    form = await read_form(request)
    if not auth.token_ok(form.get("token", "").strip()):
        logger.warning("web: a login with a wrong token")
        return HTMLResponse(
            pages.render(
                "login.html",
                title="Log in",
                nav=None,
                problem="That is not the token. Run wilson web-token to see it again (it makes a new one).",
            ),
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="wilson"'},
        )
    return logged_in(now)


def logged_in(now) -> Response:
    sid = auth.new_session(now)
    response = RedirectResponse("/today", status_code=303)  # the address bar keeps no code
    response.set_cookie(
        COOKIE, sid, max_age=int(auth.SESSION_TIME.total_seconds()), httponly=True, samesite="strict", path="/"
    )
    logger.info("web: logged in")
    return response


async def logout(site, request: Request, who, now) -> Response:
    auth.end_session(who.sid)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response


# Pages --------------------------------------------------------------------------------------
async def home(site, request: Request, who, now) -> Response:
    return RedirectResponse("/today", status_code=303)


async def today(site, request: Request, who, now) -> Response:
    return page(
        "today.html",
        who,
        now,
        "today",
        title="Today",
        t=pages.today(now, site.config.timezone, site.user(), coming=True),
        key=secrets.token_urlsafe(12),
        done=pages.done_notice(request.query_params.get("done", ""), site.config.timezone),
        did=pages.command_notice(request.query_params.get("did", ""), site.name),
    )


async def proposals(site, request: Request, who, now) -> Response:
    sent = request.query_params.get("sent", "")
    return page(
        "proposals.html",
        who,
        now,
        "proposals",
        title="Proposals",
        proposals=pages.proposals(site.config.timezone, now),
        answers=pages.answers(site.name),
        sent=int(sent) if sent.isdigit() and len(sent) < 17 else None,
    )


async def decide(site, request: Request, who, now) -> Response:
    approval_id = proposal_id(request)
    form = await form_of(request)
    raw = form.get("item", "")
    site.decide(
        approval_id,
        form.get("action", ""),
        clean(form.get("text", "")),
        form.get("nonce") or None,
        item_positions([raw] if raw else []),
    )
    return RedirectResponse(f"/proposals?sent={approval_id}", status_code=303)


async def conversation(site, request: Request, who, now) -> Response:
    return page(
        "conversation.html",
        who,
        now,
        "conversation",
        title="Conversation",
        c=pages.conversation(site.name),
        key=secrets.token_urlsafe(12),
    )


async def say(site, request: Request, who, now) -> Response:
    form = await form_of(request)
    text = clean(form.get("text", ""))
    if text:
        site.say(text, clean(form.get("key", ""), 40) or None)
    return RedirectResponse("/conversation", status_code=303)


async def live_js(site, request: Request, who, now) -> Response:
    return FileResponse(STATIC / "live.js", media_type="text/javascript")


# API ----------------------------------------------------------------------------------------
async def api_today(site, request: Request, who, now) -> Response:
    return JSONResponse(pages.today(now, site.config.timezone, site.user(), coming=True))


async def api_proposals(site, request: Request, who, now) -> Response:
    return JSONResponse({"proposals": pages.proposals(site.config.timezone, now)})


async def api_decide(site, request: Request, who, now) -> Response:
    approval_id = proposal_id(request)
    data = await read_json(request)
    chosen = data.get("items", [])
    if not isinstance(chosen, list):
        raise Refused(400, "items must be a list of item numbers, like [2].")
    decision_id = site.decide(
        approval_id,
        data.get("action", ""),
        clean(data.get("text", "")),
        data.get("nonce") if isinstance(data.get("nonce"), str) else None,
        item_positions(chosen),
    )
    return JSONResponse({"decision": decision_id, "approval": approval_id}, status_code=202)


async def api_messages(site, request: Request, who, now) -> Response:
    def number(name: str) -> int:
        value = request.query_params.get(name, "0")
        return int(value) if value.isdigit() and len(value) < 17 else 0

    return JSONResponse(pages.conversation(site.name, number("after_in"), number("after_out")))


async def api_say(site, request: Request, who, now) -> Response:
    data = await read_json(request)
    text = clean(data.get("text", ""))
    if not text:
        raise Refused(400, "Say something: the text is empty.")
    key = data.get("key")
    row_id = site.say(text, clean(key, 40) if isinstance(key, str) else None)
    return JSONResponse({"inbox": row_id}, status_code=202)


# Watching, topics, trace, memory, budget --------------------------------------------------
async def watch(site, request: Request, who, now) -> Response:
    form = await form_of(request)
    args = {"url": clean(form.get("url", ""), 2000)}
    every = clean(form.get("every", ""), 20)
    if every:
        args["every"] = every
    approval_id = site.propose("watch", args, form_key(form), "you asked on the dashboard to watch it")
    return RedirectResponse(f"/proposals#proposal-{approval_id}", status_code=303)


async def unwatch(site, request: Request, who, now) -> Response:
    form = await form_of(request)
    approval_id = site.propose(
        "unwatch",
        {"url": clean(form.get("url", ""), 2000)},
        form_key(form),
        "you asked on the dashboard to stop watching it",
    )
    return RedirectResponse(f"/proposals#proposal-{approval_id}", status_code=303)


async def topics(site, request: Request, who, now) -> Response:
    tz = site.config.timezone
    return page(
        "topics.html",
        who,
        now,
        "topics",
        title="Topics",
        topics=pages.topics(tz, site.user(), now),
        loose=pages.loose_tasks(tz, site.user()),
        key=secrets.token_urlsafe(12),
        one=False,
        done=pages.done_notice(request.query_params.get("done", ""), tz),
        did=pages.command_notice(request.query_params.get("did", ""), site.name),
    )


async def topic(site, request: Request, who, now) -> Response:
    tz = site.config.timezone
    topic_id = number_in(request, "topic_id", "There is no such topic.")
    found = pages.topics(tz, site.user(), now, only=topic_id)
    if not found:
        raise Refused(404, "There is no such topic.")
    return page(
        "topics.html",
        who,
        now,
        "topics",
        title=found[0]["title"],
        topics=found,
        loose=[],
        key=secrets.token_urlsafe(12),
        one=True,
        done=pages.done_notice(request.query_params.get("done", ""), tz),
        did=pages.command_notice(request.query_params.get("did", ""), site.name),
    )


async def task_done(site, request: Request, who, now) -> Response:
    task_id = number_in(request, "task_id", "There is no such task.")
    form = await form_of(request)
    approval_id = site.done(task_id, form_key(form))
    back = form.get("back", "")
    back = (
        back
        if back in ("/today", "/topics") or (back.startswith("/topics/") and back[8:].isdigit() and len(back) < 30)
        else "/topics"
    )
    return RedirectResponse(f"{back}?done={approval_id}", status_code=303)


def back_of(form: dict) -> str:
    """The page a press returns to: only one of the dashboard's own."""
    back = form.get("back", "")
    return (
        back
        if back in ("/today", "/topics") or (back.startswith("/topics/") and back[8:].isdigit() and len(back) < 30)
        else "/today"
    )


async def task_snooze(site, request: Request, who, now) -> Response:
    task_id = number_in(request, "task_id", "There is no such task.")
    form = await form_of(request)
    decision_id = site.command(f"snooze {task_id} {commands.DEFAULT_SNOOZE}", form_key(form))
    return RedirectResponse(f"{back_of(form)}?did={decision_id}", status_code=303)


async def reminder_stop(site, request: Request, who, now) -> Response:
    reminder_id = number_in(request, "reminder_id", "There is no such reminder.")
    form = await form_of(request)
    decision_id = site.command(f"stop {reminder_id}", form_key(form))
    return RedirectResponse(f"{back_of(form)}?did={decision_id}", status_code=303)


async def task_help(site, request: Request, who, now) -> Response:
    task_id = number_in(request, "task_id", "There is no such task.")
    form = await form_of(request)
    site.help(task_id, form_key(form))
    return RedirectResponse("/conversation", status_code=303)  # where Wilson's answer comes


async def undo(site, request: Request, who, now) -> Response:
    approval_id = proposal_id(request)
    site.undo(approval_id)
    return RedirectResponse("/proposals", status_code=303)


async def trace_page(site, request: Request, who, now) -> Response:
    wanted = request.query_params.get("id", "").strip()
    if wanted and (len(wanted) > 64 or not all(ch.isalnum() or ch in "-_:" for ch in wanted)):
        raise Refused(404, "There is no such trace.")
    tz = site.config.timezone
    return page(
        "trace.html",
        who,
        now,
        "trace",
        title="Trace",
        t=pages.trace(wanted, tz) if wanted else None,
        recent=[] if wanted else pages.recent_traces(tz),
        tz=str(tz),
    )


async def memory(site, request: Request, who, now) -> Response:
    can_forget = tools.toolbox(site.config).get("forget_memory") is not None
    return page(
        "memory.html",
        who,
        now,
        "memory",
        title="Memory",
        memories=pages.memories(now),
        changes=behaviour_changes(now),
        can_forget=can_forget,
        key=secrets.token_urlsafe(12),
    )


async def forget(site, request: Request, who, now) -> Response:
    raw = request.path_params.get("memory_id", "")
    if not raw.isdigit() or len(raw) > 16 or not 0 < int(raw) <= MAX_ID:
        raise Refused(404, "There is no such memory.")
    form = await form_of(request)
    args = {"memory": int(raw)}
    reason = clean(form.get("reason", ""), 300)
    if reason:
        args["reason"] = reason
    approval_id = site.propose("forget_memory", args, form_key(form), "you said on the dashboard that it is wrong")
    return RedirectResponse(f"/proposals#proposal-{approval_id}", status_code=303)


async def budget(site, request: Request, who, now) -> Response:
    return page(
        "budget.html",
        who,
        now,
        "budget",
        title="Budget",
        b=pages.budget(getattr(getattr(site, "ctx", None), "synapse", None), now),
        roles=pages.ROLES,
        channels=views.health_rows(site.config.timezone),
    )


def form_key(form: dict) -> str:
    key = clean(form.get("key", ""), 40)
    return key or secrets.token_urlsafe(12)


# The user's own intake ----------------------------------------------------------------------
async def api_stimuli(site, request: Request, who, now) -> Response:
    data = await read_json(request)
    unknown = sorted(set(data) - {"text", "title", "source", "url", "key", "event"})
    if unknown:
        raise Refused(
            400,
            f"Unknown field{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)[:200]}. "
            "Send text, and optionally title, source, url, key and event.",
        )
    text = clean(data.get("text", ""), INTAKE_TEXT)
    if not text:
        raise Refused(400, 'Send some text: {"text": "..."}.')
    payload = {}
    for name, limit in (("title", 300), ("source", 60), ("url", 2000)):
        if data.get(name) is not None:
            payload[name] = clean(data[name], limit)
    if payload.get("url") and not payload["url"].lower().startswith(("http://", "https://")):
        raise Refused(400, "url must be an http or https address.")
    key = data.get("key")
    if key is not None and (not isinstance(key, str) or not 0 < len(key) <= 100):
        raise Refused(400, "key must be a string of 1 to 100 characters.")
    if data.get("event") is not None:
        payload.update(calendar_event(data["event"]))
    row_id = site.intake(text, key, payload)
    if row_id is None:
        return JSONResponse({"buffered": None, "duplicate": True}, status_code=200)
    return JSONResponse({"buffered": row_id}, status_code=202)


async def api_watching(site, request: Request, who, now) -> Response:
    return JSONResponse({"watching": pages.watched(site.config.timezone)})


async def api_topics(site, request: Request, who, now) -> Response:
    return JSONResponse({"topics": pages.topics(site.config.timezone, site.user())})


async def mcp(site, request: Request, who, now) -> Response:
    """Wilson as an MCP server (channels/mcp/serve.py), for another agent holding the dashboard's token."""
    if who.how != "bearer":  # an agent, not a browser: a session cookie is not enough
        raise Refused(401, "Wilson's MCP endpoint takes the dashboard's token: Authorization: Bearer <token>.")
    endpoint = await site.mcp_endpoint()
    if endpoint is None:
        raise Refused(404, "Wilson's MCP endpoint is off ([mcp] serve_http), or the MCP SDK is not installed.")
    return Delegated(endpoint)


def proposal_id(request: Request) -> int:
    return number_in(request, "approval_id", "There is no such proposal.")


def number_in(request: Request, name: str, missing: str) -> int:
    raw = request.path_params.get(name, "")
    if not raw.isdigit() or len(raw) > 16 or not 0 < int(raw) <= MAX_ID:
        raise Refused(404, missing)
    return int(raw)


def build(site) -> Starlette:
    """The app for one web channel incarnation; `site` is the channel (config, now(), the gate's door). The one
    router: each route's handler is a function of this module, behind `guard`."""
    routes = [
        Route("/login", guard(site, login_page, public=True), methods=["GET"]),
        Route("/login", guard(site, login, public=True), methods=["POST"]),
        Route("/logout", guard(site, logout, changes=True), methods=["POST"]),
        Route("/", guard(site, home), methods=["GET"]),
        Route("/today", guard(site, today), methods=["GET"]),
        Route("/proposals", guard(site, proposals), methods=["GET"]),
        Route("/proposals/{approval_id}", guard(site, decide, changes=True), methods=["POST"]),
        Route("/conversation", guard(site, conversation), methods=["GET"]),
        Route("/conversation", guard(site, say, changes=True), methods=["POST"]),
        Route("/static/live.js", guard(site, live_js), methods=["GET"]),
        Route("/api/today", guard(site, api_today), methods=["GET"]),
        Route("/api/proposals", guard(site, api_proposals), methods=["GET"]),
        Route("/api/proposals/{approval_id}", guard(site, api_decide, changes=True), methods=["POST"]),
        Route("/api/messages", guard(site, api_messages), methods=["GET"]),
        Route("/api/messages", guard(site, api_say, changes=True), methods=["POST"]),
        Route("/watch", guard(site, watch, changes=True), methods=["POST"]),
        Route("/unwatch", guard(site, unwatch, changes=True), methods=["POST"]),
        Route("/topics", guard(site, topics), methods=["GET"]),
        Route("/topics/{topic_id}", guard(site, topic), methods=["GET"]),
        Route("/tasks/{task_id}/done", guard(site, task_done, changes=True), methods=["POST"]),
        Route("/tasks/{task_id}/snooze", guard(site, task_snooze, changes=True), methods=["POST"]),
        Route("/tasks/{task_id}/help", guard(site, task_help, changes=True), methods=["POST"]),
        Route("/reminders/{reminder_id}/stop", guard(site, reminder_stop, changes=True), methods=["POST"]),
        Route("/undo/{approval_id}", guard(site, undo, changes=True), methods=["POST"]),
        Route("/trace", guard(site, trace_page), methods=["GET"]),
        Route("/memory", guard(site, memory), methods=["GET"]),
        Route("/memory/{memory_id}/forget", guard(site, forget, changes=True), methods=["POST"]),
        Route("/budget", guard(site, budget), methods=["GET"]),
        Route("/api/stimuli", guard(site, api_stimuli, changes=True), methods=["POST"]),
        Route("/api/watching", guard(site, api_watching), methods=["GET"]),
        Route("/api/topics", guard(site, api_topics), methods=["GET"]),
        Route("/mcp", guard(site, mcp), methods=["GET", "POST", "DELETE"]),
    ]
    return Starlette(routes=routes)
