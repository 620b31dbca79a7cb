"""A stand-in OAuth 2.0 identity provider on loopback, as Google's and Microsoft's behave for Wilson: the device
authorization grant (RFC 8628), refresh tokens, and token introspection (RFC 7662) for the mail servers (Dovecot's
oauth2 passdb, the aiosmtpd sink) to check the access tokens they are shown.

The user's part (opening the address, entering the code, allowing) is `sign_in_after`: the grant is given at
that poll of the token endpoint. `revoke()` is the user withdrawing Wilson's access in their account settings.
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs

from wilson.kernel.loopback import LoopbackServer

USER_CODE = "WDJB-MJHT"
CLIENT_ID = "wilson-test-client"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        idp: IdentityProvider = self.server.owner
        form = {
            k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()).items()
        }
        status, body = idp.answer(self.path, form)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class IdentityProvider(LoopbackServer):
    handler = _Handler
    thread_name = "identity-provider"

    def __init__(self, user: str = "wilson", *, sign_in_after: int = 2, lifetime: int = 3600):
        super().__init__()
        self.user = user
        self.sign_in_after = sign_in_after  # polls answered "authorization_pending" before the user has signed in
        self.declines = False  # the user presses "Cancel" on the consent page instead of "Allow"
        self.lifetime = lifetime
        self.polls = 0
        self.requests: list[tuple[str, dict]] = []
        self.introspected: list[str] = []
        self.active: set[str] = set()  # access tokens in force
        self.refresh_tokens: set[str] = set()
        self._serial = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def device_url(self) -> str:
        return self.base_url + "/device/code"

    @property
    def token_url(self) -> str:
        return self.base_url + "/token"

    @property
    def introspection_url(self) -> str:
        return self.base_url + "/introspect"

    def revoke(self) -> None:
        with self._lock:
            self.active.clear()
            self.refresh_tokens.clear()

    def is_active(self, token: str) -> bool:
        with self._lock:
            return token in self.active

    def _tokens(self, refresh: bool) -> dict:
        serial = next(self._serial)
        access = f"ya29.access-{serial}"
        self.active.add(access)
        answer = {"access_token": access, "expires_in": self.lifetime, "token_type": "Bearer"}
        if refresh:
            answer["refresh_token"] = f"1//refresh-{serial}"
            self.refresh_tokens.add(answer["refresh_token"])
        return answer

    def answer(self, path: str, form: dict) -> tuple[int, dict]:
        with self._lock:
            self.requests.append((path, dict(form)))
            if path == "/introspect":
                self.introspected.append(form.get("token", ""))
                if form.get("token") in self.active:
                    return 200, {"active": True, "username": self.user}
                return 200, {"active": False}
            if form.get("client_id") != CLIENT_ID:
                return 401, {"error": "invalid_client", "error_description": "The OAuth client was not found."}
            if path == "/device/code":
                return 200, {
                    "device_code": "device-123",
                    "user_code": USER_CODE,
                    "expires_in": 60,
                    "interval": 1,
                    "verification_uri": self.base_url + "/device",
                }
            if path != "/token":
                return 404, {"error": "not_found"}
            grant = form.get("grant_type")
            if grant == "urn:ietf:params:oauth:grant-type:device_code" and form.get("device_code") == "device-123":
                self.polls += 1
                if self.polls <= self.sign_in_after:
                    return 428, {"error": "authorization_pending"}
                if self.declines:
                    return 403, {"error": "access_denied"}
                return 200, self._tokens(refresh=True)
            if grant == "refresh_token":
                if form.get("refresh_token") not in self.refresh_tokens:
                    return 400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
                return 200, self._tokens(refresh=False)
            return 400, {"error": "unsupported_grant_type"}
