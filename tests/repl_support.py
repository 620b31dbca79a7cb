"""What the tests of commands typed at the terminal share: a REPL on a running Wilson, and what one line got."""

from __future__ import annotations

import io

from wilson.app.repl import Repl


def repl_of(app) -> Repl:
    return Repl(app, out=io.StringIO(), as_json=True)


def said(app, repl, line: str) -> list[str]:
    """What Wilson told the user after one line at the terminal."""
    before = len(app.user_deliveries())
    repl.run_line(line)
    assert app.wait_idle()
    return [d["text"] for d in app.user_deliveries()[before:]]
