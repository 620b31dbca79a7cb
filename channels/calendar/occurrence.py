"""One occurrence of a series, read where it stands instead of copied.

recurring_ical_events' `as_component` copies the series' whole component for every occurrence (every
property, every parameter) only to set its start, end and recurrence id: about a fifth of the CPU of reading a
large calendar. `OccurrenceView` answers `get` and `[]` as that copy would, from the series' own component
and the occurrence's times.
"""

from __future__ import annotations

# what as_component(keep_recurrence_attributes=False) leaves out of its copy
_DROPPED = frozenset(("DURATION", "RRULE", "RDATE", "EXDATE"))
_MISSING = object()


class OccurrenceView:
    __slots__ = ("_component", "_own")

    def __init__(self, component, start, end, end_property: str | None, sequence: int):
        # lazy: icalendar (with the parsers) only once a calendar is read, not when Wilson starts
        from icalendar.prop import vDDDTypes

        own = {"DTSTART": vDDDTypes(start)}
        if end_property is not None:
            own[end_property] = vDDDTypes(end)
        if sequence >= 0:
            own["SEQUENCE"] = sequence
        if "RECURRENCE-ID" not in component:
            own["RECURRENCE-ID"] = own["DTSTART"]
        self._component, self._own = component, own

    def get(self, name: str, default=None):
        name = name.upper()
        if name in self._own:
            return self._own[name]
        if name in _DROPPED:
            return default
        return self._component.get(name, default)

    def __getitem__(self, name: str):
        value = self.get(name, _MISSING)
        if value is _MISSING:
            raise KeyError(name)
        return value

    def __contains__(self, name: str) -> bool:
        return self.get(name, _MISSING) is not _MISSING


def occurrence_fields(occurrence):
    """What `_event_from` reads of an occurrence: the view where recurring_ical_events' occurrence has the
    shape it is known to have (the version in the lock), else its own copy."""
    adapter = getattr(occurrence, "_adapter", None)
    component = getattr(adapter, "_component", None)
    if component is None or not hasattr(adapter, "end_property"):
        return occurrence.as_component(False)
    return OccurrenceView(component, occurrence.start, occurrence.end, adapter.end_property, occurrence.sequence)
