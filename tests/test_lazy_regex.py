"""The offline rules' patterns compile when a text is first read with them, not at import (start-up time),
and a lazy pattern reads a text exactly as the compiled one would."""

import re
import subprocess
import sys
import textwrap

from wilson.kernel.lazy_regex import lazy_regex

from tests.conftest import ROOT


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


def test_importing_the_offline_rules_compiles_none_of_their_patterns_and_each_of_them_compiles():
    # a process of its own: this one has read texts with many of them already
    script = textwrap.dedent(
        """
        import importlib, pkgutil, re, sys

        eager, compile = [], re.compile
        def counted(pattern, flags=0):
            if sys._getframe(1).f_globals["__name__"].startswith("wilson.model.offline"):
                eager.append(str(pattern))
            return compile(pattern, flags)
        re.compile = counted

        import wilson.model.offline as offline
        from wilson.kernel import lazy_regex

        for module in pkgutil.iter_modules(offline.__path__):
            importlib.import_module("wilson.model.offline." + module.name)
        re.compile = compile
        made = lazy_regex.made()
        early = eager + [p.pattern for p in made if p.is_compiled]
        broken = []
        for pattern in made:
            try:
                pattern.search("")
            except re.error as exc:
                broken.append(f"{pattern.pattern!r}: {exc}")
        print(len(made), len(early), len(broken))
        print("\\n".join(early[:5] + broken))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    ).stdout.splitlines()
    made, early, broken = map(int, out[0].split())
    assert made > 300, out  # the rules' patterns are made lazily (about 370 of them)
    assert early == 0 and broken == 0, out[1:]


def test_the_change_filler_words_written_out_are_what_words_reads():
    from wilson.model.offline.answers import FILLER
    from wilson.model.offline.words import words

    assert words("für erst bis zum den auf besser mach machs draus daraus") <= FILLER
