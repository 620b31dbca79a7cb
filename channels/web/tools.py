"""The watcher's tools: watch and unwatch are proposals the user approves; list_watches reads."""

from __future__ import annotations

from datetime import timedelta

from channels.web import fetching, watcher
from wilson.kernel.clock import parse_duration
from wilson.skills import Tool


def _default_every(call) -> timedelta:
    raw = str(call.settings("web").get("watch_poll") or "").strip().lower()
    try:
        return parse_duration(raw) if raw not in ("", "off", "0", "none", "false") else watcher.DEFAULT_EVERY
    except ValueError:
        return watcher.DEFAULT_EVERY


def _off(config) -> str:
    if config is None:
        return ""
    if not config.get("web", "enabled"):
        return "watching pages needs the web channel: set [web] enabled = true"
    if str(config.get("web", "watch_poll") or "").strip().lower() in ("off", "0", "none", "false"):
        return 'watching pages is switched off ([web] watch_poll = "off")'
    return ""


class Watch(Tool):
    name = "watch"
    description = (
        "Propose watching a web page or feed (RSS, Atom, JSON Feed) the user names: Wilson looks at it "
        "on its own cadence and reads new items or real changes into the briefing. `every`: how often, "
        "like 30m, 6h or 1d (at most every 5 minutes)."
    )
    parameters = {
        "type": "object",
        "required": ["url"],
        "additionalProperties": False,
        "properties": {
            "url": {"type": "string", "description": "http or https address"},
            "every": {"type": "string", "description": "e.g. 30m, 6h, 1d"},
        },
    }
    limits = {"url": fetching.MAX_URL, "every": 20}

    def needs(self, config) -> str:
        return _off(config)

    def validate(self, args, call):
        problem = self.check_args(args)
        if problem:
            return problem
        try:
            url = watcher.normalise_url(args["url"])
            watcher.parse_every(args.get("every"), _default_every(call))
        except ValueError as exc:
            return str(exc)
        state = watcher.get(url)
        if state is not None and not args.get("every"):
            return f"{url} is watched already"
        return None

    def describe(self, args, call):
        url = watcher.normalise_url(args["url"])
        every = watcher.parse_every(args.get("every"), _default_every(call))
        return f"Watch {url} (looked at every {watcher.describe_every(every)})"

    def execute(self, args, call):
        url = watcher.normalise_url(args["url"])
        every = watcher.parse_every(args.get("every"), _default_every(call))
        watched = watcher.get(url)  # watched already: this changes how often, and an undo puts that back
        state = watcher.add(url, every, call.now)
        return {
            "watching": url,
            "every": watcher.describe_every(every),
            "id": state["id"],
            "before_every": _every_arg(watched),
        }


class Unwatch(Tool):
    name = "unwatch"
    description = "Propose no longer watching a page or feed (its address, as list_watches shows it)."
    parameters = {
        "type": "object",
        "required": ["url"],
        "additionalProperties": False,
        "properties": {"url": {"type": "string"}},
    }
    limits = {"url": fetching.MAX_URL}

    def needs(self, config) -> str:
        return _off(config)

    def validate(self, args, call):
        problem = self.check_args(args)
        if problem:
            return problem
        try:
            url = watcher.normalise_url(args["url"])
        except ValueError as exc:
            return str(exc)
        return None if watcher.get(url) is not None else f"{url} is not watched; see list_watches"

    def describe(self, args, call):
        url = watcher.normalise_url(args["url"])
        state = watcher.get(url) or {}
        title = f" (“{state['title']}”)" if state.get("title") else ""
        return f"Stop watching {url}{title}"

    def execute(self, args, call):
        url = watcher.normalise_url(args["url"])
        watched = watcher.get(url)
        if not watcher.remove(url):
            raise ValueError(f"{url} was not watched any more")
        return {"stopped": url, "every": _every_arg(watched)}


def _every_arg(state: dict | None) -> str | None:
    """How often a watched address was looked at, as `watch` takes it ("90m"); None when it was not watched."""
    return f"{int(state['every']) // 60}m" if state and state.get("every") else None


class ListWatches(Tool):
    name = "list_watches"
    description = "The pages and feeds Wilson watches: address, title, how often, when last looked at, any problem."
    parameters = {"type": "object", "properties": {}}
    read_only = True
    untrusted = "watched pages and feeds"  # their titles and problems are others' words

    def needs(self, config) -> str:
        return _off(config)

    def execute(self, args, call):
        return {"watching": [watcher.view(s, call.tz) for s in watcher.sources()]}
