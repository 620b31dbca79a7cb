"""Running the command line in process, for the tests of its commands."""

from __future__ import annotations
import contextlib
import io
from wilson.app import cli


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()
