"""The offline rules' patterns compile when a text is first read with them, not at import (start-up time),
and a lazy pattern reads a text exactly as the compiled one would."""

import re

from wilson.kernel.lazy_regex import lazy_regex


def test_a_lazy_pattern_reads_a_text_as_the_compiled_pattern_does():
    source, text = r"\b(?P<verb>pay|send)\s+(?P<what>\w+)", "Please PAY rent, then send flowers, pay gas"
    lazy, eager = lazy_regex(source, re.I), re.compile(source, re.I)
    assert lazy.pattern == eager.pattern
    assert lazy.search(text).group("what") == eager.search(text).group("what") == "rent"
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.findall(text) == eager.findall(text)
    assert lazy.sub(r"\g<what>", text) == eager.sub(r"\g<what>", text) == "Please rent, then flowers, gas"
    assert lazy.fullmatch("pay rent") and not lazy.match("I pay rent")
    assert lazy.split(text) == eager.split(text)
    assert (lazy.flags, lazy.groups, lazy.groupindex) == (eager.flags, eager.groups, eager.groupindex)


def test_a_broken_pattern_is_the_same_error_at_its_first_use():
    broken = lazy_regex(r"(?P<open>unclosed")
    try:
        broken.search("unclosed")
    except re.error as exc:
        assert "missing )" in str(exc)
    else:
        raise AssertionError("a broken pattern read a text")
