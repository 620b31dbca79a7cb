"""What the MCP tests share: the environment that sets up the SDK test server (tests/mcp_servers.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parent / "mcp_servers.py"


def servers(log: Path, **extra) -> dict:
    """The environment that sets up one server named notes (the same as [mcp.servers.notes] in wilson.toml)."""
    notes = {"command": sys.executable, "args": [str(SERVER), str(log)], "timeout": 3, **extra}
    return {"WILSON_MCP_SERVERS": json.dumps({"notes": notes})}
