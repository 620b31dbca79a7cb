"""The Japan trip every end-to-end story plans."""

from __future__ import annotations


TRIP = "Trip to Japan"


START = "2027-01-05T08:00:00+01:00"


# The scripted model: deterministic tool calls chosen from what the request says ---------
PLAN = [
    ("Check passport validity", "2027-01-15"),
    ("Check visa and entry requirements", "2027-02-01"),
    ("Book flights", "2027-02-15"),
    ("Book accommodation", "2027-03-01"),
    ("Buy travel insurance", "2027-03-20"),
    ("Pack", "2027-04-08"),
]
