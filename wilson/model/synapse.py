"""The Synapse: the only way from Wilson to a language model.

Every actor asks for a *role* (reflex, fast, deep), never for a model. The role
decides the endpoint and the model from `[llm]` configuration: a key such as
`model` applies to every role, `deep_model` overrides it for one. With no
`base_url` a role is answered by the offline provider, which speaks the same
OpenAI wire format, so actors cannot tell the difference.

One `chat()` call is: budget check -> request (retries with backoff, then the
next model of the fallback chain) -> parse (one repair round trip for broken
tool arguments or broken JSON) -> token accounting in `TokenUsage`. Every error
that leaves this module is a `SynapseError`, so an actor can catch one type and
carry on when a model fails.

A model that answers but breaks the protocol (wilson/model/protocol.py: free text where a tool call or a
decision was due, chat-template tokens, tool arguments that are not JSON twice, an empty answer to someone
waiting) or keeps a run waiting past [llm] run_seconds has failed that run: the offline rules answer it
instead, for the rest of the run (a `trace_scope`), traced as a fallback with the reason, and the failure is
counted per role and day in `TokenUsage` (`failures`), which `wilson status`, `wilson doctor` and the
briefing read. max_tokens is sized by the kind of job (`sized_tokens`).

A model that does not answer (connection refused, timeouts, 5xx after every
retry) opens a breaker for its role: until the next probe, a few minutes later,
no background request goes out and background calls are answered by the offline
rules (traced as "offline fallback (model unreachable)"); a user's call still
gets one attempt, and the honest error when it fails. The user is told once when background work switches to
the offline rules and once when the model answers again; that state is a Setting
row, so a restart does not tell them twice.

Size: one class, the gateway, whose budget counters, breakers and transports are state its methods
share; what does not share it (endpoints, transports, replies, errors) is in modules of its own.
"""

from __future__ import annotations

import random
import threading
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta

import peewee
from loguru import logger

from storage import hot, kv, mute, outbox, trace
from storage.db import database
from storage.models import TokenUsage
from wilson import skills
from wilson.kernel import clock as clockmod, liveness
from wilson.kernel.config import ROLES
from wilson.kernel.redact import redact, register
from wilson.model.endpoints import Endpoint, resolve_endpoint, setting, single_shot, with_base_url
from wilson.model import ears, protocol
from wilson.model.errors import (
    BudgetExhausted,
    ModelOutputError,
    ModelUnavailable,
    Rejected,
    Retryable,
    RunOverdue,
    SynapseError,
)
from wilson.model.offline import OfflineProvider
from wilson.model.replay import Recorder, ReplayTransport
from wilson.model.replies import BadOutput, ChatResult, cost, parse_reply, prices, token_counts, usd
from wilson.model.transports import HttpTransport, OfflineTransport


ORIGINS = ("user", "background")
JSON_FORMATS = ("json_object", "json_schema")
STEP_SLACK = 10.0  # seconds beyond a model call's own timeout before its actor counts as hung
DOWN_PROBE_SECONDS = 300.0  # a model that is down is asked again at most this often
OFFLINE_SPENT_SECONDS = 1.0  # how long a role answered by the offline rules trusts its last read of the budget
FALLBACK_REASON = "offline fallback (model unreachable)"
PROTOCOL_REASON = "offline fallback (the model broke the protocol: {})"
BAD_JSON_TWICE = "tool arguments not valid JSON twice in a row"
REST_KEY = "model:resting"  # Setting: {role: {"until": iso, "failed": n, "why": last failure}} while a role rests
RESTING_REASON = "offline fallback (the model is resting after {} failed runs in a row, until {})"
REST_LIMIT_SECONDS = 86400.0  # the longest rest: a model that never keeps the protocol is still asked once a day
DOWN_KEY = "model:down"  # Setting: {"since": iso, "roles": [...]} while background work runs on the rules
DOWN_NOTICE = (
    "Heads-up: my language model isn't answering, so I'm handling background work (calendar, "
    "deadlines) with my simple built-in rules for now. I'll tell you when it's back."
)
BACK_NOTICE = "My language model is answering again, so I'm back to full thinking for background work."


_scope = threading.local()
_RUN_FIELDS = ("trace_id", "fallback_traced", "ruled", "counted", "deadline")


@contextmanager
def trace_scope(trace_id: str | None):
    """Model calls made inside (on this thread) are one run, belonging to `trace_id`: an offline fallback is
    traced there; a role whose model broke the protocol (or ran out of time) is answered by the offline rules
    for the rest of the run; each role's run is counted once, and is held to one wall-clock limit."""
    previous = tuple(getattr(_scope, name, None) for name in _RUN_FIELDS)
    _scope.trace_id, _scope.fallback_traced, _scope.ruled, _scope.counted, _scope.deadline = (
        trace_id,
        False,
        {},
        set(),
        {},
    )
    try:
        yield
    finally:
        for name, value in zip(_RUN_FIELDS, previous):
            setattr(_scope, name, value)


class Synapse:
    def __init__(
        self,
        config,
        clock,
        *,
        provider_override: str | None = None,
        backoff_base: float = 0.25,
        max_backoff: float = 30.0,
        probe_seconds: float = DOWN_PROBE_SECONDS,
    ):
        self.config = config
        self.clock = clock
        register(config.secrets())  # every error this module raises is redacted with these
        self.backoff_base = backoff_base
        self.max_backoff = max_backoff
        self._random = random.Random()
        self._lock = threading.Lock()
        self._pause_logged: set[tuple[str, str]] = set()
        self.probe_seconds = probe_seconds
        # role -> (next probe on the domain clock, next probe on the monotonic clock): either one passing
        # lets a probe through, so a simulated clock that stands still does not keep a role down forever
        self._down: dict[str, tuple[datetime, float]] = {}
        self._up_checked: set[str] = set()  # roles whose stored "down" state was cleared after an answer
        self._down_noticed = False  # the stored "down" state was read or written by this process
        self._down_roles_stored: set[str] = set()
        self._offline_spent: dict[str, tuple[str, int, float]] = {}  # role -> (day, tokens, monotonic read time)
        # role -> failed runs in a row; role -> (rest ends on the domain clock, on the monotonic clock, how many
        # rests in a row): see _rest
        self._strikes: dict[str, int] = {}
        self._rest: dict[str, tuple[datetime, float, int]] = {}
        self._closers: list = []
        self.endpoints = {role: resolve_endpoint(config, role) for role in ROLES}
        self._transports = {}
        self._http = None
        self._offline = None
        self.recorder = None

        override = provider_override or ""
        self._no_ears = bool(override)  # offline or a replay: no speech model is asked either
        if override.startswith("replay:"):
            replay = ReplayTransport(override[len("replay:") :])
            self._transports = {role: replay for role in ROLES}
            self.endpoints = {role: single_shot(ep) for role, ep in self.endpoints.items()}
        elif override and override != "offline":
            raise ValueError(f"unknown provider {override!r}: use 'offline' or 'replay:DIR'")
        for role, endpoint in self.endpoints.items():
            if role in self._transports:
                continue
            if override == "offline" or not endpoint.base_url:
                self._transports[role] = self._offline_transport()
                self.endpoints[role] = single_shot(endpoint, models=("offline",))
            else:
                if not endpoint.base_url.startswith(("http://", "https://")):
                    raise ValueError(
                        f"llm base_url for {role} must start with http:// or https:// (got {endpoint.base_url!r})"
                    )
                if self._http is None:
                    self._http = HttpTransport()
                self._transports[role] = self._http
        self._restore_rests()
        record_dir = str(config.get("llm", "record") or "")
        if record_dir and self._http is not None:
            self.recorder = Recorder(record_dir)

    def _offline_transport(self):
        if self._offline is None:
            self._offline = OfflineTransport(
                OfflineProvider(
                    self.config.get("llm", "playbook") or None,
                    home=self.config.get("core", "home") or None,
                    skills_playbook=skills.playbook(self.config),
                    offline_wake=bool(self.config.get("attention", "offline_wake")),
                )
            )
        return self._offline

    # -- public --------------------------------------------------------------

    @property
    def offline(self) -> bool:
        """True when the offline provider answers (every role is offline)."""
        return all(t.kind == "offline" for t in self._transports.values())

    def can_listen(self) -> bool:
        return not self._no_ears and ears.ears_of(self.config) is not None

    def transcribe(self, audio: bytes, filename: str, mime: str) -> str:
        """A voice note's words, heard by the ears (wilson/model/ears.py); NoEars when none are configured,
        ModelUnavailable when they do not answer."""
        found = None if self._no_ears else ears.ears_of(self.config)
        if found is None:
            raise ears.NoEars("no speech model is configured ([llm] ears_model)")
        return ears.transcribe(found, audio, filename, mime)

    def is_offline(self, role: str) -> bool:
        """True when the offline rules answer the role's background calls (configured so, or its model is down)."""
        return self._transports[role].kind == "offline" or role in self._down

    def is_down(self, role: str) -> bool:
        """True while the role's configured model counts as unreachable (its breaker is open)."""
        return role in self._down

    def chat(
        self,
        role: str,
        messages: list[dict],
        tools: list[dict] | None = None,
        *,
        origin: str = "background",
        response_format: dict | None = None,
        tool_choice=None,
        trace_id: str | None = None,
        context: dict | None = None,
        expect: str | None = None,
        purpose: str | None = None,
        items: int | None = None,
    ) -> ChatResult:
        """`context`: the structured facts the caller built its prompt from (kind "cortex", "triage",
        "arousal", ...); only the offline rules read it, a model reads the messages. `expect`: what the answer
        must be (wilson/model/protocol.py; a required tool_choice implies a call); an answer that breaks it, or
        whose text carries template tokens, is a failed run of the role's model: the offline rules answer
        instead. `purpose`: the kind of job (arousal, triage, reply, background, memory), which sizes max_tokens,
        and `items`, how many things the job is about (a triage batch's rows), which sizes it smaller."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
        if origin not in ORIGINS:
            raise ValueError(f"unknown origin {origin!r}: 'user' or 'background'")
        if expect is not None and expect not in protocol.EXPECTATIONS:
            raise ValueError(f"unknown expectation {expect!r}: one of {', '.join(protocol.EXPECTATIONS)}")
        if expect is None and tools and tool_choice == "required":
            expect = protocol.CALL
        endpoint = self.endpoints[role]
        self._check_budget(endpoint, origin)
        json_wanted = bool(response_format) and response_format.get("type") in JSON_FORMATS
        base = {"messages": list(messages), "max_tokens": sized_tokens(self.config, endpoint, purpose, items)}
        # a call a server left in the text is read for any name the run offers, `propose`'s actions too
        offered = set(skills.offered_names(tools))
        if tools:
            base["tools"] = tools
            if tool_choice is not None:
                base["tool_choice"] = tool_choice
        if response_format:
            base["response_format"] = response_format
        watch = None
        if self._transports[role] is self._http and _flag(setting(self.config, role, "stream")):
            # streamed, an answer that has already broken the protocol is cut off where it broke it, and one whose
            # run ran out of time stops: the server does not go on generating what nobody will read
            base["stream"] = True
            base["stream_options"] = {"include_usage": True}
            watch = protocol.watcher(expect)

        modelled = self._transports[role].kind != "offline"
        ruled_for_run = (getattr(_scope, "ruled", None) or {}).get(role) if modelled else None
        if ruled_for_run is not None:  # the model broke the protocol earlier in this run: the rules finish it
            return self._ruled(endpoint, base, context, trace_id, json_wanted, ruled_for_run, count=False)
        resting = self.resting(role) if modelled else None
        if resting is not None:  # it broke the protocol run after run: the rules answer until its rest ends
            scope = getattr(_scope, "ruled", None)
            if scope is not None:
                scope[role] = resting
            return self._ruled(endpoint, base, context, trace_id, json_wanted, resting, count=False, reason=resting)
        deadline = self._deadline(endpoint, origin) if modelled else None
        prompt_total = completion_total = 0
        for repair_round in (False, True):
            try:
                body, model, payload, fell_back = self._answer(endpoint, base, origin, context, deadline, watch)
            except RunOverdue as exc:
                return self._ruled(
                    endpoint,
                    base,
                    context,
                    trace_id,
                    json_wanted,
                    str(exc),
                    count=True,
                    new_run=self._first_of_run(role, repair_round),
                )
            ruled = fell_back or not modelled
            prompt, completion = (0, 0) if ruled else token_counts(body, payload)
            prompt_total += prompt
            completion_total += completion
            if not ruled:  # the rules cost no tokens: the budget counts what a model spent
                self._account(role, origin, prompt, completion, run=self._first_of_run(role, repair_round))
            try:
                text, calls = parse_reply(body, json_wanted, offered)
            except BadOutput as exc:
                if repair_round:
                    logger.warning("{} model {} gave unusable output after a repair round: {}", role, model, exc)
                    if context is not None:
                        return self._ruled(endpoint, base, context, trace_id, json_wanted, BAD_JSON_TWICE, count=True)
                    raise ModelOutputError(f"{role} model {model}: {exc} (still, after one repair request)") from None
                logger.info("{} model {} gave unusable output, asking once for a repair: {}", role, model, exc)
                base = {**base, "messages": base["messages"] + exc.repair}
                continue
            except (KeyError, TypeError, AttributeError, IndexError) as exc:
                logger.warning("{} model {} sent a response of an unknown shape: {!r}", role, model, exc)
                raise ModelOutputError(f"{role} model {model}: the response is not a chat completion") from None
            if not ruled:
                problem = protocol.breach(text, len(calls), expect)
                if problem is not None:
                    logger.info("{} model {} broke the protocol: {}", role, model, problem)
                    return self._ruled(endpoint, base, context, trace_id, json_wanted, problem, count=True)
                self._kept_protocol(role)
            result = ChatResult(
                text=text,
                tool_calls=calls,
                prompt_tokens=prompt_total,
                completion_tokens=completion_total,
                model=model,
                offline=ruled,
                rule=str((body.get("offline") or {}).get("rule") or "") if ruled else "",
            )
            logger.debug(
                "{} {} answered ({} origin): {} tool calls, {}+{} tokens",
                role,
                model,
                origin,
                len(calls),
                prompt_total,
                completion_total,
            )
            if ruled:
                self._trace_rule(trace_id or getattr(_scope, "trace_id", None), result, role)
            elif trace_id:
                self._trace(trace_id, result, role, origin)
            return result
        raise AssertionError("unreachable")

    def _ruled(
        self,
        endpoint: Endpoint,
        base: dict,
        context: dict | None,
        trace_id: str | None,
        json_wanted: bool,
        why: str,
        *,
        count: bool,
        new_run: bool = False,
        offered=(),
        reason: str | None = None,
    ) -> ChatResult:
        """The offline rules' answer to a call whose model failed the run (`why`), traced as a fallback with
        the reason (`reason`, when it is not the broken protocol); `count`: this is the failure itself (counted
        for the role, and towards its rest), not a later call of its run."""
        role = endpoint.role
        if count:
            self._count_failure(role, why, new_run)
            ruled = getattr(_scope, "ruled", None)
            if ruled is not None:
                ruled[role] = why
            self._struck(role, why)
        body, _, _, _ = self._fallback(
            endpoint, base, context, reason=reason or PROTOCOL_REASON.format(why), down=False
        )
        text, calls = parse_reply(body, json_wanted, offered)
        result = ChatResult(
            text=text,
            tool_calls=calls,
            prompt_tokens=0,
            completion_tokens=0,
            model="offline",
            offline=True,
            rule=str((body.get("offline") or {}).get("rule") or ""),
        )
        self._trace_rule(trace_id or getattr(_scope, "trace_id", None), result, role)
        return result

    def _deadline(self, endpoint: Endpoint, origin: str) -> float:
        """The monotonic moment after which this run's calls are answered by the offline rules: the role's
        `run_seconds` from the run's first call (a call outside a run is a run of its own)."""
        limit = run_seconds(self.config, endpoint.role)
        deadlines = getattr(_scope, "deadline", None)
        if deadlines is None:
            return clockmod.monotonic() + limit
        return deadlines.setdefault(endpoint.role, clockmod.monotonic() + limit)

    @staticmethod
    def _first_of_run(role: str, repair_round: bool) -> bool:
        if repair_round:
            return False
        counted = getattr(_scope, "counted", None)
        if counted is None:
            return True
        first = role not in counted
        counted.add(role)
        return first

    def _count_failure(self, role: str, why: str, new_run: bool = False) -> None:
        """One failed run of the role's model; `new_run`: no call of it was accounted yet (so not yet counted)."""
        runs = 1 if new_run else 0
        try:
            (
                TokenUsage.insert(day=self._day(), role=role, runs=runs, failed=1, failure=why[:200])
                .on_conflict(
                    conflict_target=[TokenUsage.day, TokenUsage.role],
                    update={
                        TokenUsage.failed: TokenUsage.failed + 1,
                        TokenUsage.runs: TokenUsage.runs + runs,
                        TokenUsage.failure: why[:200],
                    },
                )
                .execute()
            )
        except peewee.PeeweeException as exc:
            logger.error("could not count a failed run of the {} model: {}", role, exc)

    # -- a model that keeps breaking the protocol rests --------------------------------------------------------

    def resting(self, role: str) -> str | None:
        """Why the role's model is resting (the fallback's reason), or None when its runs go to the model.

        After [llm] rest_after failed runs in a row, a role's runs are answered by the offline rules for
        rest_minutes, each rest that ends in one more failed run twice as long as the one before (at most a
        day); then one run asks the model again, and a run that keeps the protocol ends the rests. Both clocks
        must have passed the end: simulated hours do not change a model, and a stopped one does not keep it
        resting longer than real minutes either."""
        rest = self._rest.get(role)
        if rest is None or (self.clock.now() >= rest[0] and clockmod.monotonic() >= rest[1]):
            return None
        until = clockmod.as_utc(rest[0]).astimezone(self.config.timezone)
        return RESTING_REASON.format(self._strikes.get(role, 0), f"{until:%a %H:%M}")

    def _restore_rests(self) -> None:
        """A rest outlasts a restart: the stored ones still running go on, for what is left of them."""
        try:
            stored = kv.get_setting(REST_KEY) or {}
            now = self.clock.now()
            for role, value in stored.items():
                if role not in ROLES or self._transports[role].kind == "offline":
                    continue
                until = datetime.fromisoformat(value["until"])
                left = (until - now).total_seconds()
                if left > 0:
                    self._rest[role] = (until, clockmod.monotonic() + left, 0)
                    self._strikes[role] = int(value.get("failed") or 0)
        except (peewee.PeeweeException, KeyError, TypeError, ValueError, AttributeError) as exc:
            logger.debug("no stored rests of the models read: {}", exc)

    def _struck(self, role: str, why: str) -> None:
        """One more failed run in a row: at rest_after of them the role rests (longer after each probe that failed)."""
        after = int(_number_setting(self.config, role, "rest_after", 2))
        with self._lock:
            strikes = self._strikes[role] = self._strikes.get(role, 0) + 1
            if not after or strikes < after:
                return
            rests = self._rest[role][2] + 1 if role in self._rest else 0
            seconds = min(REST_LIMIT_SECONDS, _number_setting(self.config, role, "rest_minutes", 15.0) * 60 * 2**rests)
            until = self.clock.now() + timedelta(seconds=seconds)
            self._rest[role] = (until, clockmod.monotonic() + seconds, rests)
        logger.warning(
            "{} model broke the protocol in {} runs in a row; the offline rules answer its runs for {:g} min",
            role,
            strikes,
            seconds / 60,
        )
        try:
            with _atomic():
                value = dict(kv.get_setting(REST_KEY) or {})
                value[role] = {"until": until.isoformat(), "failed": strikes, "why": why[:200]}
                kv.put_setting(REST_KEY, value)
        except peewee.PeeweeException as exc:
            logger.error("could not record that the {} model rests: {}", role, exc)

    def _kept_protocol(self, role: str) -> None:
        """A modelled answer that kept the protocol: the failures in a row, and any rest, are over."""
        with self._lock:
            self._strikes.pop(role, None)
            rested = self._rest.pop(role, None) is not None
        if not rested:
            return
        logger.info("{} model keeps the protocol again; its runs go to it", role)
        try:
            with _atomic():
                value = dict(kv.get_setting(REST_KEY) or {})
                if value.pop(role, None) is not None:
                    if value:
                        kv.put_setting(REST_KEY, value)
                    else:
                        kv.delete_setting(REST_KEY)
        except peewee.PeeweeException as exc:
            logger.error("could not record that the {} model keeps the protocol again: {}", role, exc)

    def failures_today(self) -> dict[str, dict]:
        """{role: {"runs", "failed", "failure"}} for the roles a model answers, today (UTC)."""
        return failures(self._day(), [r for r in ROLES if self._transports[r].kind != "offline"])

    def paused(self, role: str) -> bool:
        """True when background reasoning for the role is paused by today's budget."""
        return self._spent(role) >= self.endpoints[role].daily_budget

    def usage_today(self) -> dict[str, dict]:
        day = self._day()
        found = {row.role: row for row in TokenUsage.select().where(TokenUsage.day == day)}
        report = {}
        for role in ROLES:
            row = found.get(role)
            report[role] = {
                "calls": row.calls if row else 0,
                "prompt_tokens": row.prompt_tokens if row else 0,
                "completion_tokens": row.completion_tokens if row else 0,
                "user_tokens": row.user_tokens if row else 0,
            }
        return report

    def budget_report(self) -> str:
        usage = self.usage_today()
        table = prices(self.config)
        lines = [f"Model use today ({self._day()} UTC):"]
        billed = 0.0
        for role in ROLES:
            u, ep = usage[role], self.endpoints[role]
            spent = u["prompt_tokens"] + u["completion_tokens"]
            if self._transports[role].kind == "offline":
                lines.append(f"  {role}: no language model (offline rules), no tokens")
                continue
            where = f"{ep.models[0]}, not answering: offline rules" if self.is_down(role) else ep.models[0]
            calls = f"{u['calls']} call" + ("" if u["calls"] == 1 else "s")
            money = cost(table[role], u["prompt_tokens"], u["completion_tokens"])
            billed += money
            line = f"  {role} ({where}): {spent:,} of {ep.daily_budget:,} tokens, {calls}, about {usd(money)}"
            if spent >= ep.daily_budget:
                left = max(0, ep.daily_budget + ep.user_reserve - spent)
                line += f" - background reasoning paused; {left:,} tokens left for your own requests"
            lines.append(line)
        if billed:
            # the provider's prefix cache bills repeated prompt starts for less: this is the most it costs
            lines.append(f"  about {usd(billed)} in all at [llm] price_<role> (input not counted as cached)")
        return "\n".join(lines)

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
        for closer in self._closers:
            try:
                closer()
            except Exception as exc:
                logger.warning("closing synapse: {}", exc)
        self._closers.clear()

    def on_close(self, callback) -> None:
        self._closers.append(callback)

    # -- internals -----------------------------------------------------------

    def _trace_rule(self, trace_id: str | None, result: ChatResult, role: str) -> None:
        """An offline answer is traced as such, with the rule that fired (never as a model's)."""
        if not trace_id:
            return
        try:
            # the reason names the role and the rule; the data holds only what it does not say, the calls made
            calls = [c.name for c in result.tool_calls]
            trace.record(
                trace_id,
                "offline",
                "synapse",
                f"{role}: offline rule: {result.rule or 'none'}",
                at=self.clock.now(),
                data={"tool_calls": calls} if calls else None,
            )
        except peewee.PeeweeException as exc:
            logger.error("could not trace an offline answer: {}", exc)

    def _trace(self, trace_id: str, result: ChatResult, role: str, origin: str) -> None:
        try:
            trace.record(
                trace_id,
                "model",
                "synapse",
                f"{role} {result.model}: {result.prompt_tokens}+{result.completion_tokens} tokens",
                at=self.clock.now(),
                data={
                    "role": role,
                    "model": result.model,
                    "origin": origin,
                    "tool_calls": [c.name for c in result.tool_calls],
                },
            )
        except peewee.PeeweeException as exc:
            logger.error("could not trace a model call: {}", exc)

    def _day(self) -> str:
        return clockmod.as_utc(self.clock.now()).date().isoformat()

    def _spent(self, role: str) -> int:
        """Tokens the role spent today, read from the database before each call (other processes spend too).

        A role the offline rules answer here spends nothing in this process, and the read would cost
        more than the rules' answer: its figure is read again after OFFLINE_SPENT_SECONDS (a process
        configured with a model for it may spend meanwhile)."""
        if self._transports[role].kind == "offline":
            day, moment = self._day(), clockmod.monotonic()
            known = self._offline_spent.get(role)
            if known is not None and known[0] == day and moment - known[2] < OFFLINE_SPENT_SECONDS:
                return known[1]
            spent = self._read_spent(role)
            self._offline_spent[role] = (day, spent, moment)
            return spent
        return self._read_spent(role)

    def _read_spent(self, role: str) -> int:
        try:
            # read before every call, so the statement is built once (storage/hot.py); a counter kept in
            # this process would miss what other processes spend
            found = hot.execute(
                "tokens_spent",
                lambda: (
                    'SELECT "prompt_tokens" + "completion_tokens" FROM "token_usage" WHERE "day" = ? AND "role" = ?'
                ),
                (self._day(), role),
            ).rows
            spent = found[0][0] if found else 0
        except peewee.PeeweeException as exc:
            raise SynapseError(f"cannot read the token budget: {exc}") from exc
        return spent or 0

    def _check_budget(self, endpoint: Endpoint, origin: str) -> None:
        spent = self._spent(endpoint.role)
        if origin == "background" and spent >= endpoint.daily_budget:
            key = (self._day(), endpoint.role)
            with self._lock:
                first = key not in self._pause_logged
                self._pause_logged.add(key)
            if first:
                logger.warning("background reasoning paused: {} budget spent", endpoint.role)
            raise BudgetExhausted(
                f"{endpoint.role}: daily budget of {endpoint.daily_budget:,} tokens spent "
                f"({spent:,} used); background reasoning waits for tomorrow"
            )
        limit = endpoint.daily_budget + endpoint.user_reserve
        if origin == "user" and spent >= limit:
            raise BudgetExhausted(
                f"{endpoint.role}: daily budget and user reserve spent ({spent:,} of {limit:,} "
                "tokens); raise llm.daily_budget or wait for tomorrow"
            )

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(self.max_backoff, retry_after)
        wait = self.backoff_base * (2**attempt)
        return min(self.max_backoff, wait * self._random.uniform(1.0, 1.5))

    def _request(
        self,
        endpoint: Endpoint,
        base: dict,
        probe: bool = False,
        context: dict | None = None,
        deadline: float | None = None,
        watch=None,
    ) -> tuple[dict, str, dict]:
        """`probe`: the role is known to be down; one attempt per model and a quiet log are enough.
        `deadline`: the run's wall-clock limit (monotonic): no attempt outlasts it, and none starts after it."""
        transport = self._transports[endpoint.role]
        failures = []
        unreachable = True
        retries = 0 if probe else endpoint.retries
        for position, model in enumerate(endpoint.models):
            payload = {"model": model, **base}
            last = None
            for attempt in range(retries + 1):
                sent = endpoint
                if deadline is not None:
                    left = deadline - clockmod.monotonic()
                    if left <= 0:
                        raise RunOverdue(f"the run went past its limit of {run_seconds(self.config, endpoint.role):g}s")
                    sent = replace(endpoint, timeout=min(endpoint.timeout, left))
                # a slow model is not a hung actor: the watchdog gives each attempt its timeout
                liveness.beat(sent.timeout + STEP_SLACK, f"{endpoint.role} model call")
                try:
                    if transport.kind == "offline":
                        body = transport.send(sent, model, payload, context)  # type: ignore[call-arg]
                    elif transport is self._http:  # it alone reads a stream as it comes
                        body = self._http.send(sent, model, payload, watch)
                    else:
                        body = transport.send(sent, model, payload)
                except Retryable as exc:
                    if deadline is not None and clockmod.monotonic() >= deadline:
                        raise RunOverdue(
                            f"the run went past its limit of {run_seconds(self.config, endpoint.role):g}s ({exc})"
                        ) from None
                    last = exc
                    unreachable = unreachable and not exc.answered
                    if attempt < retries:
                        wait = self._backoff(attempt, exc.retry_after)
                        logger.info(
                            "{} model {}: {}; retry {} of {} in {:.2f}s",
                            endpoint.role,
                            model,
                            exc,
                            attempt + 1,
                            endpoint.retries,
                            wait,
                        )
                        liveness.beat(wait + STEP_SLACK, f"{endpoint.role} retry wait")
                        clockmod.pause(wait)
                    continue
                except Rejected as exc:
                    last = exc
                    unreachable = False
                    break
                if self.recorder is not None and transport is self._http:
                    try:
                        self.recorder.write(endpoint.role, model, payload, body)
                    except OSError as exc:
                        logger.error("could not record a model exchange: {}", exc)
                return body, model, payload
            failures.append(f"{model}: {last}")
            more = position + 1 < len(endpoint.models)
            # a transport failure is reported once, at the switch to the offline rules (see _answer)
            silent = isinstance(last, Retryable) and not last.answered
            level = "DEBUG" if probe else "INFO" if silent else "WARNING"
            logger.log(
                level,
                "{} model {} unavailable ({}){}",
                endpoint.role,
                model,
                last,
                "; falling back to " + endpoint.models[position + 1] if more else "",
            )
        raise ModelUnavailable(
            redact(f"{endpoint.role}: no model answered ({'; '.join(failures)})"),
            unreachable=unreachable and transport.kind != "offline",
        )

    # -- a model that is down ------------------------------------------------

    def _answer(
        self,
        endpoint: Endpoint,
        base: dict,
        origin: str,
        context: dict | None = None,
        deadline: float | None = None,
        watch=None,
    ) -> tuple[dict, str, dict, bool]:
        """(body, model, payload, fell_back): the model's answer, or the offline rules' while it is down.

        A user's call to a model that is down gets one attempt (no retries) and the honest error."""
        role = endpoint.role
        if self._transports[role].kind == "offline":
            return (*self._request(endpoint, base, context=context), False)
        down = self._down.get(role)
        # someone waiting for an answer is worth one attempt; background work is not worth a timeout each
        if down is not None and origin != "user" and self.clock.now() < down[0] and clockmod.monotonic() < down[1]:
            return self._fallback(endpoint, base, context)
        try:
            body, model, payload = self._request(endpoint, base, probe=down is not None, deadline=deadline, watch=watch)
        except ModelUnavailable as exc:
            if not exc.unreachable:
                raise
            self._open_breaker(role, exc)
            if origin == "user":
                raise
            return self._fallback(endpoint, base, context)
        if down is not None or role not in self._up_checked:
            self._model_back(role)
        return body, model, payload, False

    def _open_breaker(self, role: str, exc: ModelUnavailable) -> None:
        with self._lock:
            first, alone = role not in self._down, not self._down
            self._down[role] = (
                self.clock.now() + timedelta(seconds=self.probe_seconds),
                clockmod.monotonic() + self.probe_seconds,
            )
        if first:
            # the roles usually share one endpoint: one warning for the outage, not one per role
            logger.log(
                "WARNING" if alone else "INFO",
                "{} model not answering ({}); background work uses the offline rules, asked again every {:g} min",
                role,
                exc,
                self.probe_seconds / 60,
            )

    def _fallback(
        self,
        endpoint: Endpoint,
        base: dict,
        context: dict | None = None,
        *,
        reason: str = FALLBACK_REASON,
        down: bool = True,
    ) -> tuple[dict, str, dict, bool]:
        """The offline rules' answer, traced once per run as a fallback with `reason`; `down`: because the model
        is not answering (the user hears of that once)."""
        offline = single_shot(endpoint, models=("offline",))
        transport = self._offline_transport()
        payload = {"model": "offline", **base}
        try:
            body = transport.send(offline, "offline", payload, context)
        except Rejected as exc:
            raise ModelUnavailable(f"{endpoint.role}: the model is not answering and {exc}") from None
        trace_id = getattr(_scope, "trace_id", None)
        if trace_id and not getattr(_scope, "fallback_traced", False):
            _scope.fallback_traced = True  # one row per run, not one per round
            try:
                trace.record(
                    trace_id,
                    "fallback",
                    "synapse",
                    f"{endpoint.role}: {reason}",
                    at=self.clock.now(),
                    data={"role": endpoint.role, "model": endpoint.models[0]},
                )
            except peewee.PeeweeException as exc:
                logger.error("could not trace an offline fallback: {}", exc)
        if down:
            self._tell_down(endpoint.role)
        return body, "offline", payload, True

    def _tell_down(self, role: str) -> None:
        """The first fallback after the model stopped answering tells the user, once (across restarts too)."""
        if self._down_noticed:
            with self._lock:
                if role in self._down_roles_stored:
                    return
        now = self.clock.now()
        try:
            with _atomic():
                known = kv.get_setting(DOWN_KEY)
                value = dict(known or {})
                roles = set(value.get("roles") or [])
                if role in roles and known is not None:
                    stored = roles
                else:
                    value = {"since": value.get("since") or now.isoformat(), "roles": sorted(roles | {role})}
                    kv.put_setting(DOWN_KEY, value)
                    if known is None:
                        self._notice(DOWN_NOTICE, f"model_down:{value['since']}", now, "model down")
                    stored = set(value["roles"])
        except peewee.PeeweeException as exc:
            logger.error("could not record that the model is down: {}", exc)
            return
        with self._lock:
            self._down_noticed = True
            self._down_roles_stored = stored

    def _model_back(self, role: str) -> None:
        """The role's model answered: close its breaker; when no role is left down, tell the user once.

        Roles on the same endpoint are back with it: the answering server is theirs too."""
        same = {r for r in ROLES if self.endpoints[r].base_url == self.endpoints[role].base_url}
        with self._lock:
            was_down = any([self._down.pop(r, None) is not None for r in same])
            self._up_checked.update(same)
        now = self.clock.now()
        try:
            with _atomic():
                known = kv.get_setting(DOWN_KEY)
                if known is None:
                    stored = set()
                else:
                    value = dict(known)
                    stored = set(value.get("roles") or []) - same
                    if stored:
                        kv.put_setting(DOWN_KEY, {**value, "roles": sorted(stored)})
                    else:
                        kv.delete_setting(DOWN_KEY)
                        self._notice(
                            BACK_NOTICE, f"model_back:{value.get('since') or now.isoformat()}", now, "model back"
                        )
                        logger.info("{} model answers again; background work is back on the model", role)
        except peewee.PeeweeException as exc:
            logger.error("could not record that the model is back: {}", exc)
            return
        with self._lock:
            self._down_roles_stored = stored
            self._down_noticed = bool(stored)
        if was_down and stored:
            logger.info("{} model answers again", role)

    def _notice(self, text: str, key: str, now: datetime, why: str) -> None:
        """A row the tick hands to the primary channel (it releases held rows), after quiet hours if any."""
        channel = self.config.primary_channel
        try:
            hold = mute.hold_until(self.config, now)
        except ValueError:
            hold = None
        outbox.add(
            channel=channel,
            text=text,
            trace_id=trace.new_trace_id(),
            key=key,
            at=now,
            payload={"why": why},
            deliver_after=hold or now,
        )

    def _account(self, role: str, origin: str, prompt: int, completion: int, run: bool = False) -> None:
        user = prompt + completion if origin == "user" else 0
        runs = 1 if run else 0
        try:
            # one upsert, atomic by itself: no transaction around it
            (
                TokenUsage.insert(
                    day=self._day(),
                    role=role,
                    calls=1,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    user_tokens=user,
                    runs=runs,
                )
                .on_conflict(
                    conflict_target=[TokenUsage.day, TokenUsage.role],
                    update={
                        TokenUsage.calls: TokenUsage.calls + 1,
                        TokenUsage.runs: TokenUsage.runs + runs,
                        TokenUsage.prompt_tokens: TokenUsage.prompt_tokens + prompt,
                        TokenUsage.completion_tokens: TokenUsage.completion_tokens + completion,
                        TokenUsage.user_tokens: TokenUsage.user_tokens + user,
                    },
                )
                .execute()
            )
        except peewee.PeeweeException as exc:
            # losing one line of accounting is better than losing the answer the tokens paid for
            logger.error("token accounting failed for {}: {}", role, exc)


def _atomic():
    return database.atomic()


# max_tokens by the kind of job (`purpose`), when [llm] max_tokens_<purpose> (or <role>_max_tokens_<purpose>) does not
# say otherwise; never above the role's own max_tokens
PURPOSE_TOKENS = {"arousal": 200, "triage": 1024, "reply": 600, "background": 500, "memory": 1024}
# A job over `items` things (a triage batch's rows, the candidates of a night's memories) is given this much for
# the answer and this much more per thing, up to the ceiling above: a verbose model's whole answer for a batch of
# one fits in a fifth of the ceiling, and a weak model that rambles instead of calling stops there
PER_ITEM_TOKENS = {"arousal": (80, 20), "triage": (160, 160), "memory": (120, 100)}


def sized_tokens(config, endpoint: Endpoint, purpose: str | None, items: int | None = None) -> int:
    """max_tokens of one call: the role's, or its purpose's ceiling (`[llm] max_tokens_<purpose>`), made smaller
    for a job over few `items` (PER_ITEM_TOKENS)."""
    if purpose is None:
        return endpoint.max_tokens
    if purpose not in PURPOSE_TOKENS:
        raise ValueError(f"unknown purpose {purpose!r}: one of {', '.join(PURPOSE_TOKENS)}")
    value = setting(config, endpoint.role, f"max_tokens_{purpose}")
    try:
        wanted = int(value) if value not in (None, "") else PURPOSE_TOKENS[purpose]
    except (TypeError, ValueError):
        wanted = PURPOSE_TOKENS[purpose]
    if items is not None and purpose in PER_ITEM_TOKENS:
        base, each = PER_ITEM_TOKENS[purpose]
        wanted = min(wanted, base + each * max(1, items))
    return max(1, min(endpoint.max_tokens, wanted))


RUN_SECONDS = 120.0


def _flag(value) -> bool:
    return value is True or str(value).strip().lower() in ("1", "true", "yes", "on")


def _number_setting(config, role: str, key: str, default: float) -> float:
    value = setting(config, role, key)
    try:
        return float(value) if value not in (None, "") and float(value) >= 0 else default
    except (TypeError, ValueError):
        return default


def run_seconds(config, role: str) -> float:
    """How long one run may wait for the role's model before the offline rules take over ([llm] run_seconds)."""
    value = setting(config, role, "run_seconds")
    try:
        return float(value) if value not in (None, "") and float(value) > 0 else RUN_SECONDS
    except (TypeError, ValueError):
        return RUN_SECONDS


def failures(day: str, roles) -> dict[str, dict]:
    """{role: {"runs", "failed", "failure"}} for `day` (UTC): how many runs each role's model had and how many
    of them broke the protocol (the last reason why)."""
    found = {row.role: row for row in TokenUsage.select().where(TokenUsage.day == day)}
    return {
        role: {
            "runs": (found[role].runs or 0) if role in found else 0,
            "failed": (found[role].failed or 0) if role in found else 0,
            "failure": (found[role].failure or "") if role in found else "",
        }
        for role in roles
    }


def make_synapse(config, clock, llm: str | None = None, **kw) -> Synapse:
    """Build the Synapse the command line asked for.

    llm: None (from configuration), "offline", an http(s) URL for every role,
    "scripted:FILE" (a local scripted model server, stopped by close()) or "replay:DIR".
    """
    if not llm:
        return Synapse(config, clock, **kw)
    if llm == "offline" or llm.startswith("replay:"):
        return Synapse(config, clock, provider_override=llm, **kw)
    if llm.startswith(("http://", "https://")):
        return Synapse(with_base_url(config, llm), clock, **kw)
    if llm.startswith("scripted:"):
        # lazy: the scripted server (http.server and the email parser) only for a scripted model, not every start
        from wilson.model.scripted import load_script

        server = load_script(llm[len("scripted:") :])
        base_url = server.start()
        try:
            synapse = Synapse(with_base_url(config, base_url), clock, **kw)
        except Exception:
            server.stop()
            raise
        synapse.on_close(server.stop)
        return synapse
    raise ValueError(f"--llm {llm!r}: use offline, an http(s) URL, scripted:FILE or replay:DIR")
