"""The machinery of the phrase tables (tests/data/offline/, tests/data/fresh/): rows of calendar events and chat
lines, each with the outcome a person would expect, run through the REPL (wilson/app/repl.py's Repl, as
bin/wilson-repl runs it) on a whole Wilson with no model, and scored as precision and recall.

Row format: the header of tests/data/offline/dev.txt. A table may say its own simulated now on a line
`# start: ISO8601` (default: Tue 5 Jan 2027 10:00 in Berlin, as the offline tables were written).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from storage.models import Approval, ApprovalItem, Task, Topic
from wilson.app.repl import Repl
from wilson.model.offline.recognition import load_playbook

DATA = Path(__file__).resolve().parent / "data"
START = "2027-01-05T10:00:00+01:00"
NOT_UNDERSTOOD = "I didn't understand that"


@dataclass
class Row:
    kind: str  # event | setup | chat
    fields: list[str]
    line: int

    @property
    def expected(self) -> str:
        return self.fields[3] if self.kind == "event" else self.fields[1]

    @property
    def checks(self) -> list[str]:
        raw = self.fields[4] if self.kind == "event" else (self.fields[2] if len(self.fields) > 2 else "")
        return [c.strip() for c in raw.split(";") if c.strip()]


def load(path: Path) -> list[Row]:
    rows = []
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if not text.strip() or text.startswith("#"):
            continue
        kind, _, rest = text.partition(":")
        fields = [f.strip() for f in rest.split("|")]
        width = {"event": 5, "setup": 1, "chat": 3}[kind]
        rows.append(Row(kind, fields + [""] * (width - len(fields)), number))
    return rows


@dataclass
class Score:
    expected: int = 0  # rows where a plan or an action is expected
    proposed: int = 0  # rows where one was proposed (or, for chat, understood)
    right: int = 0  # proposed and the expected one, with the expected dates
    helped: int = 0  # chat rows that expect the honest "I didn't understand" and got it: counted neither way
    wrong: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.right / self.proposed if self.proposed else 1.0

    @property
    def recall(self) -> float:
        return self.right / self.expected if self.expected else 1.0

    def line(self, name: str) -> str:
        return (
            f"{name}: precision {self.precision:.2f} ({self.right}/{self.proposed}), "
            f"recall {self.recall:.2f} ({self.right}/{self.expected})"
        )


PLAYBOOK = load_playbook()


def plan_kind(task_titles: list[str]) -> str:
    """Which playbook plan these proposed tasks are: the entry sharing most task titles with them."""
    best, score = "?", 0
    for event in PLAYBOOK:
        shared = len(set(task_titles) & {t.title for t in event.tasks})
        if shared > score:
            best, score = event.name, shared
    return best


def _after_the_event(kind: str) -> dict[str, int]:
    """{task title: days after the start} for the steps of a playbook plan due on its day or after it."""
    event = next((e for e in PLAYBOOK if e.name == kind), None)
    return {t.title: -t.days_before for t in event.tasks if t.days_before <= 0} if event else {}


def check_dues(checks: list[str], dues: dict[str, str], title: str) -> list[str]:
    problems = []
    for check in checks:
        if check.startswith("-"):
            if check[1:] in dues:
                problems.append(f"{title}: “{check[1:]}” should be left out")
            continue
        task, _, due = check.partition("=")
        if task in dues and dues[task] != due:
            problems.append(f"{title}: “{task}” due {dues[task]}, expected {due}")
        elif task not in dues and task not in ("topic",):
            problems.append(f"{title}: no “{task}” proposed")
    return problems


class Session:
    """One Wilson on a simulated clock, driven line by line through the REPL."""

    def __init__(self, app):
        self.app = app
        self.out = io.StringIO()
        self.repl = Repl(app, out=self.out, as_json=True)

    def run(self, line: str) -> None:
        assert self.repl.run_line(line)
        assert '"type": "error"' not in self.out.getvalue(), self.out.getvalue()

    def last_approval(self) -> int:
        newest = Approval.select().order_by(Approval.id.desc()).first()
        return newest.id if newest else 0


def start_of(path: Path) -> str:
    """The table's simulated now: its `# start: ISO8601` line, else START."""
    found = re.search(r"^#\s*start:\s*(\S+)", path.read_text(), re.MULTILINE)
    return found.group(1) if found else START


def score_events(session: Session, rows: list[Row], today: date) -> tuple[Score, list[str]]:
    for row in rows:
        title, when, where = row.fields[:3]
        session.run(f'calendar add "{title}" @ {when}' + (f"; {where}" if where else ""))
    session.run("sync")
    tasks: dict[str, dict[str, str]] = {}
    topics = set()
    for item in ApprovalItem.select():
        args = item.args or {}
        if item.tool == "create_topic":
            topics.add(args.get("title"))
        elif item.tool == "create_task" and args.get("topic"):
            tasks.setdefault(args["topic"], {})[args["title"]] = args.get("due")
    score, invariants = Score(), []
    for row in rows:
        title, when, expected = row.fields[0], row.fields[1], row.expected
        start = date.fromisoformat(when.split("->")[0].strip()[:10])
        proposed = title in topics or title in tasks
        dues = tasks.get(title, {})
        got = plan_kind(list(dues)) if proposed else "none"
        score.expected += expected != "none"
        score.proposed += proposed
        problems = check_dues(row.checks, dues, title) if proposed and got == expected else []
        if expected != "none" and got == expected and not problems:
            score.right += 1
        elif got != expected or problems:
            score.wrong.append(f"line {row.line}: {title!r} → {got} (expected {expected}) {'; '.join(problems)}")
        after = _after_the_event(got)
        for task, due in dues.items():
            # a plan is fitted to the time left: nothing due before tomorrow, nothing on or after the start, but
            # a step the playbook puts on the day or after it (the new address once moved) is due just then
            if task in after and due is not None:
                if date.fromisoformat(due[:10]) != start + timedelta(days=after[task]):
                    invariants.append(f"{title}: “{task}” due {due}, {after[task]} days after {start} expected")
            elif due is None or not (
                today < date.fromisoformat(due[:10]) < start or date.fromisoformat(due[:10]) == start == today
            ):
                invariants.append(f"{title}: “{task}” due {due}, event starts {start}")
    return score, invariants


def item_name(item: ApprovalItem, key: str) -> str | None:
    args = item.args or {}
    if key == "task" and args.get("task_id") is not None:
        task = Task.get_or_none(Task.id == args["task_id"])
        return task.title if task else None
    if key == "topic" and args.get("topic_id") is not None:
        topic = Topic.get_or_none(Topic.id == args["topic_id"])
        return topic.title if topic else None
    value = args.get(key)
    return None if value is None else str(value)


def chat_outcome(session: Session, line: str) -> tuple[str, list[ApprovalItem], str]:
    before = session.last_approval()
    # ids and statuses only: a table's session piles up hundreds of proposals, read again for every line
    waiting = {i for (i,) in Approval.select(Approval.id).where(Approval.status == "pending").tuples()}
    said = len(session.app.user_deliveries())
    session.run(f"say {line}")
    reply = "\n".join(d["text"] for d in session.app.user_deliveries()[said:])
    decided = {
        status for (status,) in Approval.select(Approval.status).where(Approval.id.in_(list(waiting))).tuples()
    } - {"pending"}
    items = list(ApprovalItem.select().join(Approval).where(Approval.id > before).order_by(ApprovalItem.id))
    if "approved" in decided or "partial" in decided:
        return "approve", items, reply
    if "rejected" in decided:
        return "reject", items, reply
    if items:
        tools = [i.tool for i in items]
        if "create_topic" in tools:
            return "plan:" + plan_kind([i.args.get("title") for i in items if i.tool == "create_task"]), items, reply
        return tools[0], items, reply
    if NOT_UNDERSTOOD in reply:
        return "none", items, reply
    return ("answer" if reply.strip() else "silent"), items, reply


def chat_problems(expected: str, checks: list[str], items: list[ApprovalItem], reply: str) -> list[str]:
    problems = []
    for check in checks:
        key, _, value = check.partition("=")
        if key == "says":
            if value.lower() not in reply.lower():
                problems.append(f"the reply does not say {value!r}")
            continue
        if expected.startswith("plan:"):
            if key.startswith("-"):  # "-Task title": the plan leaves it out
                if key[1:] in {i.args.get("title") for i in items if i.tool == "create_task"}:
                    problems.append(f"“{key[1:]}” is in the plan, expected left out")
            elif key == "topic":
                titles = [i.args.get("title") for i in items if i.tool == "create_topic"]
                if value not in titles:
                    problems.append(f"topic {titles}, expected {value!r}")
            else:
                dues = {i.args.get("title"): i.args.get("due") for i in items if i.tool == "create_task"}
                if dues.get(key) != value:
                    problems.append(f"“{key}” due {dues.get(key)}, expected {value}")
            continue
        item = next((i for i in items if i.tool == expected), None)
        got = item_name(item, key) if item is not None else None
        if got != value:
            problems.append(f"{key}={got!r}, expected {value!r}")
    return problems


def score_chat(session: Session, rows: list[Row]) -> tuple[Score, list[str]]:
    for row in rows:
        if row.kind == "setup":
            before = session.last_approval()
            session.run(f"say {row.fields[0]}")
            made = session.last_approval()
            assert made > before, f"setup line {row.line} proposed nothing: {row.fields[0]!r}"
            session.run(f"approve {made}")
    score, replies = Score(), []
    for row in rows:
        if row.kind != "chat":
            continue
        line, expected = row.fields[0], row.expected
        got, items, reply = chat_outcome(session, line)
        replies.append(reply)
        understood = got not in ("none", "silent")
        score.expected += expected != "none"
        score.proposed += understood
        score.helped += expected == got == "none"
        problems = chat_problems(expected, row.checks, items, reply) if got == expected else []
        if expected != "none" and got == expected and not problems:
            score.right += 1
        elif got != expected or problems:
            score.wrong.append(f"line {row.line}: {line!r} → {got} (expected {expected}) {'; '.join(problems)}")
    return score, replies


def run_half(make_app, path: Path, show_misses: bool = True) -> tuple[Score, Score, list[str], list[str]]:
    """One table, events then chat lines, on a fresh Wilson; its scores printed (`pytest -s` shows them).
    `show_misses` False: a held-back half's rows are never printed, only its scores (it is run, not read)."""
    rows = load(path)
    start = start_of(path)
    session = Session(make_app(start=start))
    events, invariants = score_events(session, [r for r in rows if r.kind == "event"], date.fromisoformat(start[:10]))
    chat, _ = score_chat(session, [r for r in rows if r.kind != "event"])
    said = [d["text"] for d in session.app.user_deliveries()]
    print(
        f"\n{path.name}: {len([r for r in rows if r.kind == 'event'])} events, "
        f"{len([r for r in rows if r.kind == 'chat'])} chat lines"
    )
    print(events.line("  calendar recognition"))
    print(chat.line("  chat intents"))
    print(f"  chat lines that got the honest help their row expects: {chat.helped}")
    for wrong in (events.wrong + chat.wrong) if show_misses else ():
        print("   ", wrong)
    return events, chat, invariants, said


def assert_honest(invariants: list[str], said: list[str]) -> None:
    assert invariants == []
    assert said and not any(re.search(r"\bNoted\b", text) for text in said)
