"""Calendar helpers for tests: the editor of a calendar file, as a user's calendar app would edit it.

The editor itself lives in channels/calendar/editor.py because the REPL's `calendar add` and
`calendar cancel` use it; tests import it from here so that they depend on one name only.
"""

from channels.calendar.editor import add_event, cancel_event, move_event

__all__ = ["add_event", "cancel_event", "move_event"]
