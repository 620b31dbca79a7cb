"""What the model layer raises: the Synapse's errors (an actor catches SynapseError and stays alive) and the
transports' failures (Retryable: worth another attempt; Rejected: another attempt will not help)."""

from __future__ import annotations


class SynapseError(Exception):
    """Base of everything the Synapse raises; catching it keeps an actor alive."""


class BudgetExhausted(SynapseError):
    """Today's token budget for the role is spent (for this origin)."""


class ModelUnavailable(SynapseError):
    """No model of the role's chain answered (after retries and fallbacks).

    `unreachable`: every attempt went unanswered (no connection, timeout, 5xx), as opposed to a request
    the endpoint refused (4xx), a rate limit or a broken body, which the offline rules must not paper over."""

    def __init__(self, message: str, unreachable: bool = False):
        super().__init__(message)
        self.unreachable = unreachable


class RunOverdue(SynapseError):
    """The run went past its wall-clock limit ([llm] run_seconds): the offline rules answer instead of a wait."""


class ModelOutputError(SynapseError):
    """The model answered, but not in a usable form, even after one repair round."""


class Retryable(Exception):
    """A transport failure worth another attempt (timeout, connection, 5xx, 429)."""

    def __init__(self, reason: str, retry_after: float | None = None, answered: bool = False):
        super().__init__(reason)
        self.retry_after = retry_after
        # answered: the model's server is there (a rate limit, a broken body); only silence counts as "down"
        self.answered = answered


class Rejected(Exception):
    """A failure that another attempt at the same model will not fix (4xx)."""
