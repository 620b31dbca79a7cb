"""The tick: Wilson's own sense of time.

It watches four kinds of moment and turns each into a row or a nudge:
- deadline windows of open tasks ("7d,1d,due,overdue" unless the task's kind or the task has
  its own, see `task_kind`): one
  inbox row per (task, window), for the cortex to decide whether and how to surface; the
  windows falling due within the same local hour fire together, as one bundle that
  reaches the user as one message (actors/attention.py);
- cron schedules (croniter) in the user's timezone: the morning briefing, the RAS
  interval, the nightly hippocampus run and the user's recurring reminders;
- quiet-hour holds that have ended: held outbox rows become deliverable;
- topics whose end has passed.

Every due moment is stored on its row (Task.next_fire_at, Schedule.next_fire_at,
Outbox.deliver_after, Topic.ends), so a scan is a range query on an index and
`next_due` can tell a simulated clock where to jump next.

After downtime nothing fires in a burst. A schedule fires its latest missed
occurrence once if that is fresher than the schedule's staleness window, and
records the others as skipped; a task fires only its latest passed window and
records the earlier ones as skipped.

Window times (documented choice):
- "Nd" / "Nw": N days before the due, on the local calendar (a 15:00 due gives a
  15:00 follow-up even across a DST change); for a date-only due at 09:00 local.
- "Nh" / "Nm": that long before the due moment (for a date-only due, before 09:00
  local on the due day).
- "due": 09:00 local on the due day for a date-only due; two hours before the due
  moment for a timed one (a heads-up you can still act on).
- "overdue": 09:00 local the day after a date-only due; one day after a timed one.
- A heads-up (any window but "due" and "overdue") falling within 12 hours of the user approving
  the task or its new date is left out: they have just read it (`JUST_SEEN`); one a week or more ahead,
  within five days (`JUST_PLANNED`): they have just planned it. Windows set for the
  task itself are kept, and so is the last heads-up when no later window is left.

The package, along its seams: `schedules` (the builtin jobs and reminders, the missed-job policy,
`next_due`) and `actor` (one scan of everything, and the actor). What the gate, the briefing and the
toolbox share with the tick lives below the organs: `actors/deadlines.py` (task windows and topic ends),
`actors/shared/windows.py` (windows on dates), `actors/shared/cron.py` (cron expressions across DST) and
`actors/shared/schedule_rows.py` (the reminders the toolbox writes).
"""
