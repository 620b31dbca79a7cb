"""A stand-in for the supervisor's directory, for a test that runs one actor on its own."""

from __future__ import annotations


class RecordingDirectory:
    """Records what the actor tells the others, which handlers ended and what crashed; `strict`
    fails the test at the first crash instead of keeping it for the test to look at."""

    def __init__(self, strict: bool = False, delivers: bool = True):
        self.strict, self.delivers = strict, delivers
        self.told: list[tuple[str, object]] = []
        self.handled_by: list[str] = []
        self.crashes: list[tuple[str, object]] = []

    def tell(self, name, message) -> bool:
        self.told.append((name, message))
        return self.delivers  # whether an actor of that name was there to be told

    def handled(self, name, *_):
        self.handled_by.append(name)

    def crashed(self, name, error, *_):
        if self.strict:
            raise AssertionError(f"{name} crashed: {error}")
        self.crashes.append((name, error))
