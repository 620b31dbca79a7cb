"""What the tests of Google and Microsoft accounts share: the settings that point Wilson at the stand-in identity
provider, adding an account through the command a user types, and what a revoked grant is told as."""

from __future__ import annotations

from tests.config_support import cli, no_traceback
from tests.identity_provider import CLIENT_ID
from tests.mailservers import USER

REVOKED = (
    "Google no longer lets Wilson in: the access you gave was revoked or has expired. Run "
    "`wilson account add google` to give it again."
)


def account_env(idp) -> dict:
    return {
        "WILSON_ACCOUNTS_CLIENT_ID": CLIENT_ID,
        "WILSON_ACCOUNTS_DEVICE_URL": idp.device_url,
        "WILSON_ACCOUNTS_TOKEN_URL": idp.token_url,
    }


def add_account(home, idp, *, pending_polls: int = 0):
    """`pending_polls`: how many of Wilson's polls (a second apart, as the provider asks) come before the user has
    signed in; none, unless the test is about that wait."""
    idp.polls, idp.sign_in_after = 0, pending_polls
    result = cli(home, "account", "add", "google", "--email", USER, **account_env(idp))
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    return result
