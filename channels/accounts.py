"""Google and Microsoft accounts over OAuth 2.0: the device flow that grants Wilson access, the stored grant, and
fresh access tokens for IMAP and SMTP (XOAUTH2).

`wilson account add google|microsoft` runs the device authorization grant (RFC 8628): the provider gives a short
code and an address to open on any device (a phone will do); the user signs in there and allows Wilson; the
command, polling meanwhile at the interval the provider asks for, then receives the grant. Its refresh token is
written to `$WILSON_HOME/accounts/<provider>.json`, readable only by the user (0600), and turned into short-lived
access tokens as they are needed (refreshed a minute before they expire, the new one written back). A grant the
provider no longer honours (revoked, expired, the password changed) is `GrantRevoked`, whose words say the command
that fixes it; the channels tell it once.

Which client Wilson is to the provider is the user's: `[accounts] client_id` (and `client_secret`, in the
environment) of an OAuth client registered for "TVs and limited input devices" (Google) or a public client with
the device flow allowed (Microsoft). `device_url` and `token_url` override the provider's endpoints (a stand-in
identity provider in the tests).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from wilson.kernel import clock as clockmod

TIMEOUT = 20.0
EARLY = timedelta(seconds=60)  # an access token this close to its end is refreshed first


@dataclass(frozen=True)
class Provider:
    name: str
    title: str
    device_url: str
    token_url: str
    scope: str
    imap: tuple[str, int, str]
    smtp: tuple[str, int, str]


PROVIDERS = {
    "google": Provider(
        "google",
        "Google",
        "https://oauth2.googleapis.com/device/code",
        "https://oauth2.googleapis.com/token",
        "https://mail.google.com/ https://www.googleapis.com/auth/calendar",
        ("imap.gmail.com", 993, "ssl"),
        ("smtp.gmail.com", 587, "starttls"),
    ),
    "microsoft": Provider(
        "microsoft",
        "Microsoft",
        "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode",
        "https://login.microsoftonline.com/common/oauth2/v2.0/token",
        "offline_access https://outlook.office.com/IMAP.AccessAsUser.All https://outlook.office.com/SMTP.Send",
        ("outlook.office365.com", 993, "ssl"),
        ("smtp.office365.com", 587, "starttls"),
    ),
}


class AccountError(Exception):
    """The device flow or a refresh did not work; the words say why and what to do."""


class GrantRevoked(AccountError):
    """The provider no longer honours the stored grant: it must be given again."""


def provider_of(name: str) -> Provider:
    try:
        return PROVIDERS[name.strip().lower()]
    except KeyError:
        raise AccountError(f"unknown account kind {name!r}: use google or microsoft") from None


def fix_line(provider: Provider) -> str:
    return (
        f"{provider.title} no longer lets Wilson in: the access you gave was revoked or has expired. Run "
        f"`wilson account add {provider.name}` to give it again."
    )


def _endpoints(config, provider: Provider) -> tuple[str, str]:
    get = config.get
    return (
        str(get("accounts", "device_url") or provider.device_url),
        str(get("accounts", "token_url") or provider.token_url),
    )


def _client(config) -> dict:
    client_id = str(config.get("accounts", "client_id") or "").strip()
    if not client_id:
        raise AccountError(
            "no OAuth client is set: register one with the provider (docs/email.md says how) and set "
            "[accounts] client_id and WILSON_ACCOUNTS_CLIENT_SECRET"
        )
    form = {"client_id": client_id}
    secret = str(config.get("accounts", "client_secret") or "")
    if secret:
        form["client_secret"] = secret
    return form


def _post(url: str, form: dict) -> tuple[int, dict]:
    # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
    import httpx

    try:
        response = httpx.post(url, data=form, headers={"Accept": "application/json"}, timeout=TIMEOUT)
    except httpx.HTTPError as exc:
        raise AccountError(f"the sign-in server did not answer ({type(exc).__name__})") from None
    try:
        answer = response.json()
    except ValueError:
        answer = {}
    return response.status_code, answer if isinstance(answer, dict) else {}


# The grant on disk -------------------------------------------------------------------------------------
def grant_path(home: Path, provider: Provider) -> Path:
    return Path(home) / "accounts" / f"{provider.name}.json"


def save_grant(home: Path, provider: Provider, grant: dict) -> Path:
    """Written whole and atomically, readable only by the user, in a folder only the user can enter."""
    path = grant_path(home, provider)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, stat.S_IRWXU)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(grant, out)
    os.replace(tmp, path)
    return path


def load_grant(home: Path, provider: Provider) -> dict | None:
    path = grant_path(home, provider)
    try:
        grant = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise AccountError(
            f"{path} cannot be read ({type(exc).__name__}); run `wilson account add {provider.name}` again"
        ) from None
    return grant if isinstance(grant, dict) else None


def _stored(answer: dict, now: datetime, old: dict | None = None) -> dict:
    grant = dict(old or {})
    grant["access_token"] = str(answer["access_token"])
    grant["expires_at"] = (now + timedelta(seconds=int(answer.get("expires_in") or 3600))).isoformat()
    if answer.get("refresh_token"):  # a provider may rotate it; else the old one stays good
        grant["refresh_token"] = str(answer["refresh_token"])
    return grant


# The device flow -----------------------------------------------------------------------------------------
def device_flow(config, provider: Provider, say, *, account: str = "") -> dict:
    """Run RFC 8628 to its end: `say(line)` tells the user where to go and what to type; returns the grant,
    already saved. Waits at the provider's interval (slower when it says slow_down) until it is given, refused
    or the code runs out."""
    device_url, token_url = _endpoints(config, provider)
    form = _client(config)
    status, started = _post(device_url, {**form, "scope": provider.scope})
    if status != 200 or not started.get("device_code"):
        said = started.get("error_description") or started.get("error") or f"HTTP {status}"
        raise AccountError(f"{provider.title} would not start the sign-in ({said}); check [accounts] client_id")
    where = started.get("verification_uri") or started.get("verification_url") or ""
    say(
        f"Open {where} on any device, sign in to your {provider.title} account and enter the code "
        f"{started['user_code']}"
    )
    interval = max(1.0, float(started.get("interval") or 5))
    give_up = clockmod.monotonic() + float(started.get("expires_in") or 900)
    while clockmod.monotonic() < give_up:
        clockmod.pause(interval)
        status, answer = _post(
            token_url,
            {
                **form,
                "device_code": started["device_code"],
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            },
        )
        error = answer.get("error")
        if status == 200 and answer.get("access_token"):
            if not answer.get("refresh_token"):
                raise AccountError(
                    f"{provider.title} gave no refresh token, so Wilson would lose access within "
                    "the hour; check the client's type and the scope"
                )
            grant = _stored(answer, clockmod.wall_now(), {"provider": provider.name, "account": account})
            save_grant(config.home, provider, grant)
            return grant
        if error == "authorization_pending":
            continue
        if error == "slow_down":
            interval += 5  # RFC 8628 3.5
            continue
        if error == "access_denied":
            raise AccountError("you declined on the sign-in page; nothing was stored")
        if error == "expired_token":
            break
        raise AccountError(
            f"{provider.title} refused the sign-in ({answer.get('error_description') or error or status})"
        )
    raise AccountError("the code ran out before it was entered; run the command again")


# Access tokens ----------------------------------------------------------------------------------------------
def access_token(config, provider: Provider, fresh: bool = False) -> str:
    """A token that is good for at least a minute: the stored one, or a new one from the refresh token (`fresh`:
    a new one whatever the stored one says, after a server refused it)."""
    grant = load_grant(config.home, provider)
    if not grant or not grant.get("refresh_token"):
        raise GrantRevoked(f"no {provider.title} account is added; run `wilson account add {provider.name}`")
    now = clockmod.wall_now()
    try:
        expires = datetime.fromisoformat(str(grant.get("expires_at")))
    except ValueError:
        expires = now
    if grant.get("access_token") and expires - EARLY > now and not fresh:
        return str(grant["access_token"])
    _, token_url = _endpoints(config, provider)
    status, answer = _post(
        token_url, {**_client(config), "grant_type": "refresh_token", "refresh_token": grant["refresh_token"]}
    )
    if status == 200 and answer.get("access_token"):
        grant = _stored(answer, now, grant)
        save_grant(config.home, provider, grant)
        return str(grant["access_token"])
    if answer.get("error") in ("invalid_grant", "unauthorized_client", "invalid_client"):
        raise GrantRevoked(fix_line(provider))
    raise AccountError(
        f"{provider.title} did not give a fresh access token "
        f"({answer.get('error_description') or answer.get('error') or f'HTTP {status}'})"
    )


def token_source(config, section: str):
    """For `[<section>] oauth = "google"` (or "microsoft"): a callable(fresh=False) giving an access token from the
    account `wilson account add` stored; None when the section logs in with a password."""
    name = str(config.get(section, "oauth") or "").strip()
    if not name:
        return None
    provider = provider_of(name)
    return lambda fresh=False: access_token(config, provider, fresh)


def revoked_key(config, section: str) -> str:
    """The idempotency key of the one message about a revoked grant: one per grant, whichever channel finds it."""
    provider = provider_of(str(config.get(section, "oauth")))
    grant = load_grant(config.home, provider) or {}
    mark = hashlib.sha256(str(grant.get("refresh_token", "")).encode()).hexdigest()[:16]
    return f"oauth-revoked:{provider.name}:{mark}"


def xoauth2(user: str, token: str) -> str:
    """The SASL XOAUTH2 initial response (before base64), as Gmail and Outlook take it."""
    return f"user={user}\x01auth=Bearer {token}\x01\x01"


def oauthbearer(user: str, token: str) -> str:
    """The SASL OAUTHBEARER initial response (RFC 7628), for servers that offer it and not XOAUTH2."""
    return f"n,a={user},\x01auth=Bearer {token}\x01\x01"


def sasl(offered: str, user: str, token: str) -> tuple[str, str]:
    """The mechanism and initial response to log in with: XOAUTH2 (Gmail's and Outlook's) unless the server
    offers only OAUTHBEARER. `offered`: the server's list of mechanisms, any case."""
    words = offered.upper().replace("AUTH=", " ").split()
    if "XOAUTH2" not in words and "OAUTHBEARER" in words:
        return "OAUTHBEARER", oauthbearer(user, token)
    return "XOAUTH2", xoauth2(user, token)


def settings_lines(provider: Provider, account: str) -> list[str]:
    """What to put in wilson.toml so that mail (and Google's calendar) use the account."""
    imap, smtp = provider.imap, provider.smtp
    return [
        "[email]",
        f'imap_host = "{imap[0]}"',
        f'imap_security = "{imap[2]}"',
        f'username = "{account}"',
        f'smtp_host = "{smtp[0]}"',
        f'smtp_security = "{smtp[2]}"',
        f'oauth = "{provider.name}"',
    ]
