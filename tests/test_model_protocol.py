"""A model Wilson can rely on, and one it cannot (issue 45): a run that breaks the tool protocol fails and the
offline rules take it over, template tokens never reach the user, clear alarms have a floor under the model's
silence, calls are sized, and real servers' response shapes read the same."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from storage import trace
from storage.models import ApprovalItem, Inbox, Outbox, ReceptorBuffer, TokenUsage
from tests.brain import call, context_of, is_cortex, organ_reply, tool_names
from wilson.app import cli
from wilson.app.eval import scorer
from wilson.app.eval.report import rules_verdict
from wilson.app.eval.runner import run_scenario
from wilson.app.eval.scenarios import suite
from wilson.kernel import config as configmod
from wilson.kernel.clock import SimClock
from wilson.model import protocol
from wilson.model.scripted import MODES
from wilson.model.synapse import Synapse, trace_scope

START = "2027-01-05T08:00:00+01:00"
TASK_TOOL = {
    "type": "function",
    "function": {
        "name": "create_task",
        "description": "Propose a task.",
        "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
    },
}
ASK = [{"role": "system", "content": "You are Wilson."}, {"role": "user", "content": "Remind me to call the bank"}]
NURSE = (
    "Email from nurse@stmarys-school.org: Lily has a fever\n"
    "Hello, this is the school nurse. Your daughter Lily has a fever of 39 and is unwell. "
    "Please come and pick her up as soon as possible."
)
NURSE_MAIL = {"from": "nurse@stmarys-school.org", "subject": "Lily has a fever"}


@pytest.fixture
def connect(tmp_path, any_db):
    """Synapse factory on each backend (the failure counters are upserts)."""
    made = []

    def build(base_url: str, **llm) -> Synapse:
        config = configmod.load(
            tmp_path / "home",
            environ={"WILSON_LLM_BASE_URL": base_url, "WILSON_LLM_MODEL": "default", "WILSON_LLM_RETRIES": "0"},
        )
        for key, value in llm.items():
            config.set("llm", key, value)
        synapse = Synapse(config, SimClock(datetime(2027, 1, 5, 7, tzinfo=timezone.utc)), backoff_base=0.01)
        made.append(synapse)
        return synapse

    yield build
    for synapse in made:
        synapse.close()


# -- text hygiene ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, shown",
    [
        (
            "<<SYS>>\nYou are a new assistant on your way to the office",
            "You are a new assistant on your way to the office",
        ),
        ("<b><i>[INST]What is a topic?[/INST]", "<b><i>What is a topic?"),
        ("<|im_start|>assistant\nSure, done.<|im_end|>", "Sure, done."),
        ("<start_of_turn>model\nHello!<end_of_turn>", "Hello!"),
        ("Assistant: The dentist is at 3.\nUser: thanks\nAssistant: welcome", "The dentist is at 3."),
        ("<s> Your train leaves at 9.</s>", "Your train leaves at 9."),
    ],
)
def test_template_tokens_and_role_markers_never_reach_the_user(raw, shown):
    assert protocol.template_marks(raw) is not None
    assert protocol.clean(raw) == shown
    assert protocol.template_marks(protocol.clean(raw)) is None


def test_a_clean_reply_is_left_as_written_capped_in_length_and_never_empty():
    text = "Your week:\n  • Mon: dentist at 3\n  • Tue: nothing"
    assert protocol.template_marks(text) is None and protocol.clean(text) == text
    assert "user interface" in protocol.clean("The user interface: fine")  # a word, not a role marker
    long = protocol.clean("word " * 2000)
    assert len(long) <= protocol.REPLY_LIMIT + 1 and long.endswith("…")
    assert protocol.deliverable("  <s></s> ") == protocol.EMPTY_ANSWER


def test_what_breaks_the_protocol():
    assert protocol.breach("Sure! Everything is fine.", 0, protocol.CALL) is not None
    assert protocol.breach("", 0, protocol.CALL) == "it answered with nothing instead of the required tool call"
    assert protocol.breach("I looked at it; nothing to do.", 0, protocol.DECISION) is not None
    assert protocol.breach("", 0, protocol.DECISION) is None  # the protocol's silence
    assert protocol.breach("  ", 0, protocol.ANSWER) == "an empty answer to the user"
    assert protocol.breach("Done. [INST] next", 1, None).startswith("its text carries chat-template tokens")
    assert protocol.breach("", 1, protocol.CALL) is None


# -- the response shapes of real servers -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_each_servers_response_shape_reads_as_the_same_tool_call(serve, connect, mode):
    server = serve(
        [{"reply": {"tool_calls": [{"name": "create_task", "arguments": {"title": "Call the bank"}}]}}], mode=mode
    )
    synapse = connect(server.base_url)
    result = synapse.chat("deep", ASK, tools=[TASK_TOOL])
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("create_task", {"title": "Call the bank"})]
    assert not result.offline and result.prompt_tokens > 0 and result.completion_tokens > 0  # estimated without usage
    assert synapse.failures_today()["deep"] == {"runs": 1, "failed": 0, "failure": ""}


@pytest.mark.parametrize("mode", MODES)
def test_each_servers_plain_text_answer_reads_as_text(serve, connect, mode):
    server = serve([{"reply": {"text": "The bank opens at nine."}}], mode=mode)
    result = connect(server.base_url).chat("deep", ASK, tools=[TASK_TOOL], origin="user", expect=protocol.ANSWER)
    assert result.text == "The bank opens at nine." and result.tool_calls == ()


def test_words_about_a_tool_are_no_tool_call(serve, connect):
    server = serve([{"reply": {"text": '{"name": "delete_everything", "arguments": {}}'}}], mode="llamacpp")
    result = connect(server.base_url).chat("deep", ASK, tools=[TASK_TOOL], origin="user")
    assert result.tool_calls == () and "delete_everything" in result.text


# -- a failed run: the offline rules answer, the failure is counted -------------------------------------------------


def test_template_text_is_a_failed_run_answered_by_the_rules_and_counted(serve, connect):
    server = serve([{"reply": {"text": "<<SYS>>\nYou are a new assistant on your way to the office"}}])
    synapse = connect(server.base_url)
    with trace_scope("t-1"):
        first = synapse.chat("deep", ASK, tools=[TASK_TOOL], origin="user", expect=protocol.ANSWER)
        again = synapse.chat("deep", ASK, tools=[TASK_TOOL], origin="user")  # the rest of the run: the rules
    assert first.offline and again.offline and "<<SYS>>" not in (first.text or "")
    assert len(server.requests) == 1, "the rules finish the run: the model is not asked again in it"
    assert [(t.stage, t.reason) for t in trace.path("t-1") if t.stage == "fallback"] == [
        (
            "fallback",
            "deep: offline fallback (the model broke the protocol: its text carries chat-template tokens ('<<SYS>>'))",
        )
    ]
    assert synapse.failures_today()["deep"] == {
        "runs": 1,
        "failed": 1,
        "failure": "its text carries chat-template tokens ('<<SYS>>')",
    }


def test_a_model_that_breaks_the_protocol_run_after_run_rests_and_is_asked_again_later(serve, connect, monkeypatch):
    from channels.views import failure_lines
    from wilson.kernel import clock as clockmod

    behaved = {"now": False}
    server = serve(
        [
            {
                "reply": lambda body: (
                    {"tool_calls": [{"name": "create_task", "arguments": {"title": "x"}}]}
                    if behaved["now"]
                    else {"text": "Sure! I had a look at it and all seems fine."}
                )
            }
        ]
    )
    synapse = connect(server.base_url, rest_after=2, rest_minutes=15)
    real, ahead = clockmod.monotonic, [0.0]
    monkeypatch.setattr(clockmod, "monotonic", lambda: real() + ahead[0])

    def run(name: str):
        with trace_scope(name):
            return synapse.chat("deep", ASK, tools=[TASK_TOOL], expect=protocol.DECISION)

    def later(minutes: float):
        synapse.clock.advance(timedelta(minutes=minutes))
        ahead[0] += minutes * 60

    assert run("r1").offline and run("r2").offline and len(server.requests) == 2
    assert run("r3").offline and len(server.requests) == 2, "resting: the model is not asked"
    [fallback] = [t.reason for t in trace.path("r3") if t.stage == "fallback"]
    assert fallback == "deep: offline fallback (the model is resting after 2 failed runs in a row, until Tue 07:15)"
    [line] = [line for line in failure_lines() if "resting" in line]
    assert line == (
        "model deep: resting after 2 failed runs in a row (last: the background run ended with free text "
        "and no tool call): the offline rules answer its runs until 2027-01-05 07:15, then one run asks "
        "the model again."
    )
    assert synapse.failures_today()["deep"]["failed"] == 2, "a run the model was not asked is no failure of it"

    later(16)
    assert run("r4").offline and len(server.requests) == 3, "after the rest, one run asks the model"
    later(16)
    assert run("r5").offline and len(server.requests) == 3, "it failed again: the next rest is twice as long"
    later(15)
    behaved["now"] = True
    assert not run("r6").offline and len(server.requests) == 4
    assert not run("r7").offline and len(server.requests) == 5, "it keeps the protocol: no rest any more"
    assert not [line for line in failure_lines() if "resting" in line]


def test_a_run_past_its_time_limit_is_answered_by_the_rules(serve, connect):
    server = serve([{"reply": {"text": "slow"}, "latency_ms": 3000}])
    synapse = connect(server.base_url, run_seconds=0.5)
    with trace_scope("t-2"):
        result = synapse.chat("deep", ASK, tools=[TASK_TOOL], origin="user", expect=protocol.ANSWER)
    assert result.offline
    assert any(t.stage == "fallback" and "went past its limit of 0.5s" in t.reason for t in trace.path("t-2"))
    assert synapse.failures_today()["deep"]["failed"] == 1


def test_calls_are_sized_by_the_kind_of_job(serve, connect):
    server = serve([{"reply": {"tool_calls": [{"name": "create_task", "arguments": {"title": "x"}}]}}])
    synapse = connect(server.base_url, max_tokens_reply=300)
    for purpose in ("arousal", "triage", "reply", "background", None):
        synapse.chat("reflex", ASK, tools=[TASK_TOOL], purpose=purpose)
    assert [r["body"]["max_tokens"] for r in server.requests] == [200, 1024, 300, 500, 1024]


def test_a_job_over_few_things_is_given_fewer_tokens_than_a_big_one(serve, connect):
    server = serve([{"reply": {"tool_calls": [{"name": "create_task", "arguments": {"title": "x"}}]}}])
    synapse = connect(server.base_url)
    for purpose, items in [
        ("triage", 1),
        ("triage", 3),
        ("triage", 40),
        ("memory", 2),
        ("arousal", 1),
        ("arousal", 30),
    ]:
        synapse.chat("fast", ASK, tools=[TASK_TOOL], purpose=purpose, items=items)
    assert [r["body"]["max_tokens"] for r in server.requests] == [320, 640, 1024, 320, 100, 200]
    connect(server.base_url, max_tokens_triage=200).chat("fast", ASK, tools=[TASK_TOOL], purpose="triage", items=3)
    assert server.requests[-1]["body"]["max_tokens"] == 200, "a ceiling set lower is kept"


def test_one_mail_is_triaged_in_a_third_of_the_tokens_a_full_batch_may_take(make_app, serve):
    server = serve([{"reply": lambda body: organ_reply(body) or {"text": ""}}])
    app = make_app(start=START, llm=server.base_url)
    app.inject_buffered(
        "email",
        "Email from landlord@example.com: the heating is fixed\nAll done.",
        {"from": "landlord@example.com", "subject": "heating"},
    )
    app.sync()
    assert app.wait_idle()
    [triage] = [r["body"] for r in server.requests if "triage" in tool_names(r["body"])]
    assert triage["max_tokens"] == 320


# -- end to end: a weak model behind a real server -------------------------------------------------------------------


def weak(body: dict) -> dict:
    """A model that answers "ok" to everything and never calls a tool."""
    return {"text": "ok"}


@pytest.mark.slow
def test_against_a_model_that_only_says_ok_every_urgent_item_of_the_suite_is_told(tmp_path):
    script = tmp_path / "ok.json"
    script.write_text(json.dumps({"rules": [{"reply": {"text": "ok"}}]}))
    urgent = [s for s in suite("dev") if any(step.by is not None and step.expect == "surface" for step in s.steps)]
    assert len(urgent) >= 10
    for scenario in urgent:
        result = scorer.score(scenario, run_scenario(scenario, f"scripted:{script}"))
        timely = result["timeliness"]
        assert timely["urgent"] >= 1 and timely["on_time"] == timely["urgent"], (scenario.name, result["details"])
        assert not any("never told" in d for d in result["details"]), scenario.name


def test_status_shows_the_failed_runs_and_the_briefing_says_so_once(make_app, serve, capsys):
    server = serve([{"match": weak_match, "reply": weak}])
    home = None
    app = make_app(start=START, llm=server.base_url, env={"WILSON_LLM_RETRIES": "0"})
    home = app.config.home
    for n in range(3):
        app.inject_buffered(
            "email",
            f"Email from colleague{n}@example.com: notes {n}\nPlease review the notes.",
            {"from": f"colleague{n}@example.com", "subject": f"notes {n}"},
        )
    app.sync()
    assert app.wait_idle()
    usage = {row.role: row for row in TokenUsage.select()}
    assert usage["fast"].failed >= 1 and usage["fast"].failed == usage["fast"].runs  # triage: free text, no call
    assert not [d for d in app.user_deliveries() if "ok" == d["text"].strip()], "the model's text reached nobody"
    app.stop()
    capsys.readouterr()
    assert cli.main(["--home", str(home), "status"]) == 0
    out = capsys.readouterr().out
    assert "model fast: FIX:" in out and "broke the tool protocol" in out
    assert "(last: it answered with free text instead of the required tool call)" in out


def weak_match(body, headers) -> bool:
    return True


def test_the_next_briefing_says_once_that_most_runs_failed(make_app):
    app = make_app(start="2027-01-05T06:30:00+01:00")
    TokenUsage.insert(day="2027-01-04", role="deep", runs=10, failed=9, failure="free text").execute()
    line = (
        "Your model ignored the tool protocol in 9 of 10 runs yesterday (deep role); the offline rules "
        "handled them: `wilson doctor` says more."
    )
    app.advance(timedelta(hours=1))  # past the morning's daily sync: its briefing goes out
    assert app.wait_idle()
    [morning] = [d["text"] for d in app.user_deliveries() if d["text"].startswith("Good morning")]
    assert morning.endswith(line), morning
    from actors import briefing

    assert briefing.model_line(datetime(2027, 1, 5).date()) == line
    assert briefing.model_line(datetime(2027, 1, 6).date()) == "", "said by the one briefing after that day"
    TokenUsage.insert(day="2027-01-06", role="fast", runs=10, failed=2, failure="free text").execute()
    assert briefing.model_line(datetime(2027, 1, 7).date()) == "", "a few failures are no news"


# -- the floor under judgement ---------------------------------------------------------------------------------------


def calm_model(surfaces: bool = False):
    """A model that keeps the protocol but calls nothing urgent: triage keeps all at priority 3, the RAS finds
    nothing, and the cortex keeps silent (or, `surfaces`, tells every item itself)."""

    def reply(body: dict) -> dict:
        names = tool_names(body)
        last = body["messages"][-1]
        if "triage" in names:
            items = json.loads(last["content"])["items"]
            return {
                "tool_calls": [
                    call(
                        "triage",
                        items=[{"buffer_ids": [i["buffer_id"]], "priority": 2, "reason": "a mail"} for i in items],
                        drop=[],
                    )
                ]
            }
        if "arousal" in names:
            return {"tool_calls": [call("arousal", buffer_ids=[])]}
        if is_cortex(body) and last["role"] != "tool" and surfaces:
            return {"tool_calls": [call("surface", text="Lily is ill at school: please pick her up.", why="child")]}
        return organ_reply(body) or {"text": ""}

    return [{"reply": reply}]


def nurse_told(app) -> list[str]:
    return [d["text"] for d in app.user_deliveries() if "Lily" in d["text"] or "fever" in d["text"]]


def test_an_emergency_the_model_keeps_silent_about_reaches_the_user_traced_as_floor(make_app, serve):
    server = serve(calm_model())
    app = make_app(start=START, llm=server.base_url)
    row = app.inject_buffered("email", NURSE, NURSE_MAIL)
    app.sync()
    assert app.wait_idle()
    [told] = nurse_told(app)
    assert told == (
        "From the email “Lily has a fever” from nurse@stmarys-school[.]org: Heads-up: Email from "
        "nurse@stmarys-school[.]org: Lily has a fever"
    )
    stages = [(t.stage, t.actor) for t in trace.path(ReceptorBuffer.get_by_id(row.id).trace_id)]
    assert ("floor", "triage") in stages and ("floor", "cortex") in stages
    assert Inbox.get().priority == 1, "triage's calm priority was lifted"
    assert TokenUsage.select().where(TokenUsage.failed > 0).count() == 0, "silence is no broken protocol"


def test_floor_off_leaves_the_models_silence_alone(make_app, serve):
    server = serve(calm_model())
    app = make_app(start=START, llm=server.base_url, env={"WILSON_ATTENTION_FLOOR": "false"})
    app.inject_buffered("email", NURSE, NURSE_MAIL)
    app.sync()
    assert app.wait_idle()
    assert nurse_told(app) == []
    assert not Outbox.select().where(Outbox.surfaced & (Outbox.channel != "silent")).exists()


def test_a_model_that_tells_the_emergency_itself_loses_nothing_and_gets_no_second_message(make_app, serve):
    server = serve(calm_model(surfaces=True))
    app = make_app(start=START, llm=server.base_url)
    row = app.inject_buffered("email", NURSE, NURSE_MAIL)
    app.sync()
    assert app.wait_idle()
    assert nurse_told(app) == [
        "From the email “Lily has a fever” from nurse@stmarys-school[.]org: Lily is ill at school: please pick her up."
    ]
    assert ("floor", "cortex") not in [
        (t.stage, t.actor) for t in trace.path(ReceptorBuffer.get_by_id(row.id).trace_id)
    ]


# -- the cortex-requested sync -------------------------------------------------------------------------------------


def test_a_model_asking_for_a_sync_during_the_users_run_gets_the_buffered_mail_triaged_at_once(make_app, serve):
    def reply(body: dict) -> dict:
        other = organ_reply(body)
        if other is not None:
            return other
        last = body["messages"][-1]
        if last["role"] == "tool":
            return {"text": "I'm looking at your new mail now."}
        if context_of(body).get("stimulus", {}).get("origin") == "user":
            if "request_sync" in tool_names(body):
                return {"tool_calls": [call("request_sync", reason="the user asked about new mail")]}
            return {"tool_calls": [call("escalate", why="needs a sync")]}
        return {"text": ""}

    server = serve([{"reply": reply}])
    app = make_app(start=START, llm=server.base_url)
    mail = app.inject_buffered(
        "email",
        "Email from landlord@example.com: the heating is fixed",
        {"from": "landlord@example.com", "subject": "heating"},
    )
    assert app.wait_idle()
    assert not [r for r in server.requests if "triage" in tool_names(r["body"])], "no sync before the request"
    app.say("anything new in my mail?")
    assert app.wait_idle()
    triaged = [r for r in server.requests if "triage" in tool_names(r["body"])]
    assert len(triaged) == 1 and "heating is fixed" in triaged[0]["body"]["messages"][-1]["content"]
    assert ReceptorBuffer.get_by_id(mail.id).processed_at is not None
    assert Inbox.select().where(Inbox.origin == "background").count() == 1
    assert "I'm looking at your new mail now." in [d["text"] for d in app.user_deliveries()]


# -- eval: a model below the rules is told so ----------------------------------------------------------------------


def test_eval_compare_ends_with_one_sentence_when_the_model_misses_more_than_the_rules():
    def report(llm, told, proposed):
        return {"llm": llm, "total": {"surfacing_recall": told, "proposal_recall": proposed}}

    said = rules_verdict(report("offline", 0.9, 0.8), report("http://127.0.0.1:8080/v1", 0.5, 0.8))
    assert said == (
        "this model (http://127.0.0.1:8080/v1) misses more than the rules alone (told recall 50% vs 90%): "
        "with it, Wilson tells or proposes less than with no model; `wilson doctor` checks what it lacks."
    )
    assert rules_verdict(report("offline", 0.9, 0.8), report("http://m/v1", 0.95, 0.8)) == ""
    assert rules_verdict(report("http://m/v1", 0.9, 0.2), report("offline", 0.9, 0.8)).startswith("this model")
    assert rules_verdict(report("a", 0.1, 0.1), report("b", 0.9, 0.9)) == "", "only beside the rules"


def test_a_triage_line_the_briefing_may_quote_carries_no_template_token():
    from types import SimpleNamespace

    from actors.triage import normalise_decisions

    row = SimpleNamespace(id=7, text="Email from school@example.org: closing early", payload={}, channel="email")
    [decision] = normalise_decisions(
        [
            {
                "buffer_ids": [7],
                "priority": 2,
                "summary": "<<SYS>> School closes at noon",
                "plan": False,
                "say": "[INST] Pick Lily up at noon",
                "reason": "r",
            }
        ],
        [row],
    )
    assert decision["summary"] == "School closes at noon"
    assert decision["note"] == {"say": "Pick Lily up at noon"}


# -- a tool call written in the text, for any tool the run offers ---------------------------------------------------


def written_call(mode: str):
    """A model that writes its call to `propose`'s action `create_task` into the text, as the server `mode` sends
    it: llama.cpp and LM Studio put the call they were given into the text; with Ollama the model wrote it there."""

    def reply(body: dict) -> dict:
        other = organ_reply(body)
        if other is not None:
            return other
        if body["messages"][-1]["role"] == "tool":
            return {"text": "I've put that up for you to approve."}
        if "create_task" not in tool_names(body):
            return {"tool_calls": [call("escalate", why="a task")]}
        task = call("create_task", title="Call the bank", due="2027-01-08")
        return {"text": json.dumps(task)} if mode == "ollama" else {"tool_calls": [task]}

    return [{"reply": reply}]


@pytest.mark.parametrize("mode", ["llamacpp", "ollama", "lmstudio"])
def test_a_call_written_in_the_text_is_read_for_an_action_of_propose_too(make_app, serve, mode):
    server = serve(written_call(mode), mode=mode)
    app = make_app(start=START, llm=server.base_url)
    app.say("Remind me to call the bank on Friday")
    assert app.wait_idle()
    texts = [d["text"] for d in app.user_deliveries()]
    assert any("Call the bank" in text for text in texts), texts
    assert [(item.tool, item.args.get("title")) for item in ApprovalItem.select()] == [("create_task", "Call the bank")]
    assert not any('"create_task"' in text for text in texts), "the call itself reached nobody"
    assert TokenUsage.select().where(TokenUsage.failed > 0).count() == 0, "a call in the text keeps the protocol"


# -- a streamed answer that breaks the protocol is cut off where it does ---------------------------------------------


def test_a_streamed_answer_is_cut_off_at_its_first_template_token_or_free_text_where_a_call_is_due(serve):
    from wilson.model.endpoints import Endpoint
    from wilson.model.transports import HttpTransport

    sunny = "On a very sunny day in 2011, I had an idea for this month's story. " * 20
    story = "<<SYS>>\n" + sunny
    server = serve(
        [
            {"match": {"last_contains": "tale"}, "reply": {"text": sunny}},
            {"match": {"last_contains": "story"}, "reply": {"text": story}},
            {"reply": {"text": "Sure! Here is what I found in your mail today, in no particular order."}},
        ]
    )
    transport = HttpTransport()
    endpoint = Endpoint(role="deep", base_url=server.base_url, models=("m",))
    try:

        def send(words: str, expect: str | None) -> dict:
            return transport.send(
                endpoint,
                "m",
                {"model": "m", "stream": True, "messages": [{"role": "user", "content": words}]},
                protocol.watcher(expect),
            )

        cut = send("a story please", protocol.DECISION)
        assert cut["stopped"] == "its text carries chat-template tokens ('<<SYS>>')"
        assert len(cut["choices"][0]["message"]["content"]) < 32 < len(story)
        prose = send("my mail", protocol.CALL)
        assert prose["stopped"] == "it answered with free text instead of the required tool call"
        assert prose["choices"][0]["message"]["content"] == "Sure! Here is what I found in yo"  # two chunks
        brief = send("my mail", protocol.DECISION)  # a word before a call may come in a background run
        assert "stopped" not in brief and brief["choices"][0]["message"]["content"].endswith("no particular order.")
        rambling = send("a tale please", protocol.DECISION)
        assert rambling["stopped"] == "the background run ended with free text and no tool call"
        assert len(rambling["choices"][0]["message"]["content"]) < 2 * protocol.DECISION_CHARACTERS < len(sunny)
        whole = send("my mail", protocol.ANSWER)  # someone waits for words: words are the answer
        assert "stopped" not in whole and whole["choices"][0]["message"]["content"].endswith("no particular order.")
    finally:
        transport.close()
