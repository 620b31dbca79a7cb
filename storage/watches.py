"""The pages and feeds the user watches (channels/web/watcher.py), one row each, by a digest of the address:
what the user chose and what the last look found, as one JSON state."""

from __future__ import annotations

from storage.models import Watch


def get(source: str) -> dict | None:
    row = Watch.get_or_none(Watch.source == source)
    return row.state if row is not None and isinstance(row.state, dict) else None


def save(source: str, state: dict) -> None:
    Watch.insert(source=source, state=state).on_conflict(
        conflict_target=[Watch.source], update={Watch.state: state}
    ).execute()


def delete(source: str) -> bool:
    return Watch.delete().where(Watch.source == source).execute() > 0


def every() -> list[dict]:
    return [row.state for row in Watch.select().order_by(Watch.source) if isinstance(row.state, dict)]
