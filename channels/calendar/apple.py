"""Writing to the macOS Calendar app through osascript: add, move and cancel an event.

Each change is one AppleScript run by `osascript -e SCRIPT ARG…`. What the user's proposal says (a title, a
place, notes: words others may have written) goes in as arguments, never into the script's text, so nothing in
them can become AppleScript. Times are given as "YYYY-MM-DDTHH:MM" in the user's zone and built into Calendar's
dates field by field, whatever the Mac's language. A script answers one line: "OK<TAB>uid", or NONE, MANY n,
REPEATS. The first use asks the user, in a macOS dialog, to let the program Wilson runs in control Calendar;
refused, osascript fails with error -1743, told to the user with where to turn it on.
"""

from __future__ import annotations

import subprocess

from channels.calendar.event import CalendarError, one_line

DATES = r"""
on mkdate(s)
    set t to current date
    set day of t to 1
    set year of t to (text 1 thru 4 of s) as integer
    set month of t to (text 6 thru 7 of s) as integer
    set day of t to (text 9 thru 10 of s) as integer
    if length of s > 10 then
        set hours of t to (text 12 thru 13 of s) as integer
        set minutes of t to (text 15 thru 16 of s) as integer
    else
        set hours of t to 0
        set minutes of t to 0
    end if
    set seconds of t to 0
    return t
end mkdate
"""

# argv: calendar name ("" = the first writable one), marker, title, start, end ("" = an hour, or the day),
# all day ("true"/"false"), location, notes. The marker (the event's url) makes a second run find the first's event.
CREATE = (
    DATES
    + r"""
on run argv
    set {calName, marker, theTitle, startText, endText, allDay, theLocation, theNotes} to argv
    tell application "Calendar"
        repeat with c in calendars
            set found to (every event of c whose url is marker)
            if (count of found) > 0 then return "OK" & tab & (uid of item 1 of found)
        end repeat
        if calName is "" then
            set target to first calendar whose writable is true
        else
            set target to calendar calName
        end if
        set startDate to my mkdate(startText)
        if endText is "" then
            if allDay is "true" then
                set endDate to startDate + (1 * days)
            else
                set endDate to startDate + (1 * hours)
            end if
        else
            set endDate to my mkdate(endText)
            if allDay is "true" then set endDate to endDate + (1 * days)
        end if
        set e to make new event at end of events of target with properties {summary:theTitle, start date:startDate, end date:endDate, allday event:(allDay is "true"), location:theLocation, description:theNotes, url:marker}
        return "OK" & tab & (uid of e)
    end tell
end run
"""
)

# argv: title, new start, new end ("" = as long as it was), all day
MOVE = (
    DATES
    + r"""
on run argv
    set {theTitle, startText, endText, allDay} to argv
    tell application "Calendar"
        set found to {}
        repeat with c in calendars
            set found to found & (every event of c whose summary is theTitle and status is not cancelled)
        end repeat
        if (count of found) is 0 then return "NONE"
        if (count of found) > 1 then return "MANY " & (count of found)
        set e to item 1 of found
        if recurrence of e is not missing value and recurrence of e is not "" then return "REPEATS"
        set lasting to (end date of e) - (start date of e)
        set startDate to my mkdate(startText)
        if endText is "" then
            set endDate to startDate + lasting
        else
            set endDate to my mkdate(endText)
            if allDay is "true" then set endDate to endDate + (1 * days)
        end if
        set allday event of e to (allDay is "true")
        set start date of e to startDate
        set end date of e to endDate
        return "OK" & tab & (uid of e)
    end tell
end run
"""
)

# argv: title. Calendar has no "cancelled" a script may set: the event is deleted, as the user would.
CANCEL = r"""
on run argv
    set {theTitle} to argv
    tell application "Calendar"
        set found to {}
        repeat with c in calendars
            set found to found & (every event of c whose summary is theTitle)
        end repeat
        if (count of found) is 0 then return "NONE"
        if (count of found) > 1 then return "MANY " & (count of found)
        set e to item 1 of found
        if recurrence of e is not missing value and recurrence of e is not "" then return "REPEATS"
        set theUid to uid of e
        delete e
        return "OK" & tab & theUid
    end tell
end run
"""

NOT_ALLOWED = (
    "macOS did not let Wilson use Calendar: System Settings → Privacy & Security → Automation → the "
    "program Wilson runs in → switch on Calendar"
)


def run(script: str, args: list[str], *, timeout: float = 60.0) -> str:
    """One osascript run; its one line of answer, or CalendarError in the user's words."""
    try:
        done = subprocess.run(
            ["osascript", "-e", script, *args], capture_output=True, text=True, timeout=timeout, check=False
        )
    except FileNotFoundError:
        raise CalendarError("osascript is not here: Apple Calendar can be written only on a Mac") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CalendarError(f"osascript failed ({type(exc).__name__})") from None
    if done.returncode != 0:
        if "-1743" in done.stderr or "Not authorized" in done.stderr:
            raise CalendarError(NOT_ALLOWED)
        raise CalendarError(f"Calendar said: {one_line(done.stderr, 200)}")
    return done.stdout.strip()


def answer(said: str, title: str) -> str:
    """The uid from a script's answer, or CalendarError naming why nothing was changed."""
    if said.startswith("OK\t"):
        return said[3:].strip()
    if said == "NONE":
        raise CalendarError(f"there is no event called “{title}” in it")
    if said.startswith("MANY "):
        raise CalendarError(f"there are {said[5:].strip()} events called “{title}”; say which one (its day)")
    if said == "REPEATS":
        raise CalendarError(f"“{title}” repeats; Wilson moves and cancels only single events for now")
    raise CalendarError(f"Calendar answered something unexpected ({one_line(said, 80)})")
