"""Regular expressions compiled at their first use instead of at import.

The offline rules hold about 400 patterns. Compiled at import, they cost about 0.15 s of CPU at every start,
before Wilson's first answer, though a message needs a third of them. `lazy_regex(source, flags)` is written
where `re.compile(source, flags)` was, and what it returns is used the same way (`.search`, `.sub`,
`.pattern`...): the source is compiled when a text is first read with it. One difference: a match's `.re`
is the compiled pattern, not the lazy one, so a match is told apart by its pattern's source
(`found.re.pattern == X.pattern`), never by identity (`found.re is X`).
"""

from __future__ import annotations

import re
import weakref
from typing import cast

# what a compiled pattern offers, kept on the lazy one once compiled, so later uses cost what they did
_KEPT = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer", "flags", "groups")
_MADE: weakref.WeakSet[LazyPattern] = weakref.WeakSet()  # made so far and still held


class LazyPattern:
    def __init__(self, pattern: str, flags: int):
        self.pattern = pattern
        self._flags = flags
        _MADE.add(self)

    def __getattr__(self, name: str):
        # called only for what the instance lacks: before its first use, all but the source
        if name.startswith("__"):
            raise AttributeError(name)  # copy and pickle ask for their hooks: no reason to compile
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = re.compile(self.pattern, self._flags)
            self.__dict__.update({kept: getattr(compiled, kept) for kept in _KEPT}, _compiled=compiled)
        return getattr(compiled, name)

    @property
    def is_compiled(self) -> bool:
        return "_compiled" in self.__dict__


def lazy_regex(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    # typed as the compiled pattern it stands for: it answers every use of one, compiling at the first
    return cast("re.Pattern[str]", LazyPattern(pattern, flags))


def made() -> list[LazyPattern]:
    """Every lazy pattern made and still held, compiled or not (tests compile them all, to find a broken one)."""
    return list(_MADE)
