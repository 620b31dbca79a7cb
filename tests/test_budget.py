"""A spent daily budget: background reasoning pauses (and says so once), the user is still
answered, and deadlines keep firing."""

from __future__ import annotations

from datetime import date, timedelta

from actors.cortex.prompts import BUDGET_NOTICE
from actors.deadlines import plan_task
from storage.models import ReceptorBuffer, Task, TokenUsage
from tests.calendar_support import add_event


def test_spent_budget_pauses_background_but_not_the_user_or_deadlines(make_app):
    app = make_app(env={"WILSON_LLM_DAILY_BUDGET": "0"})
    now = app.clock.now()
    task = Task.create(title="Renew passport", due=now + timedelta(days=3), due_is_date=False, created_at=now)
    plan_task(task, now, ["3d", "1d", "due"], app.config.timezone)
    add_event(
        app.calendar_file(), "Trip to Japan", date(2027, 4, 10), date(2027, 4, 24), "Tokyo", tz=app.config.timezone
    )

    app.say("hello")
    app.wait_idle()
    assert len(app.user_deliveries()) == 1, "the user is answered from the reserve"

    app.advance(timedelta(days=3, hours=1))
    texts = [d["text"] for d in app.user_deliveries()]
    assert sum(BUDGET_NOTICE in t for t in texts) <= 3  # at most once a day
    first_day = [d for d in app.user_deliveries() if BUDGET_NOTICE in d["text"]]
    assert first_day, "the pause is said to the user"
    assert len({d["at"][:10] for d in first_day}) == len(first_day), "said once per day, not per run"
    reminders = [t for t in texts if "Renew passport" in t]
    assert len(reminders) >= 2, "deadline follow-ups still reach the user without a model"
    assert ReceptorBuffer.select().where(ReceptorBuffer.processed_at.is_null()).count() >= 1, (
        "buffered input waits for budget instead of being lost"
    )
    background = TokenUsage.select().where(TokenUsage.role.in_(("fast", "reflex")))
    assert sum(r.prompt_tokens + r.completion_tokens for r in background) == 0
