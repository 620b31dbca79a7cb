"""Where the dashboard listens and how it is doing, as the command line reads them: the keys under which the
web channel stores its address and health, and what counts as loopback. Apart from channels/web/channel.py so
that `wilson run` and the REPL can say where the dashboard is without loading its server (uvicorn, Starlette,
Jinja: some 5 MiB and a good part of a second) when it is off."""

from __future__ import annotations

import ipaddress

ADDRESS_KEY = "web:address"
HEALTH_KEY = "health:web"


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False
