"""How long a server has been up: `--server-started-at`, or for a local server its process's start time in /proc.

A server measured soon after it started counts as cold (`warm=false`, flag `cold`); the probe can wait until it
has been up long enough.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime
from urllib.parse import urlsplit

from factreg import clock
from factreg.errors import UsageError

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "ip6-localhost")


def listening_pid(port: int, proc: str = "/proc") -> int | None:
    """The process listening on TCP `port` in this network namespace (from /proc/net/tcp and /proc/*/fd)."""
    inodes: set[str] = set()
    for table in ("net/tcp", "net/tcp6"):
        try:
            with open(f"{proc}/{table}", encoding="ascii") as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{parts[9]}]")
    if not inodes:
        return None
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(f"{proc}/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{proc}/{pid}/fd/{fd}") in inodes:
                    return int(pid)
            except OSError:
                continue
    return None


def process_started_at(pid: int, proc: str = "/proc") -> float | None:
    """When process `pid` started (Unix time): /proc/PID/stat starttime (clock ticks after boot) + btime."""
    try:
        with open(f"{proc}/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            stat = fh.read()
        with open(f"{proc}/stat", encoding="ascii") as fh:
            btime = next(int(line.split()[1]) for line in fh if line.startswith("btime "))
        fields = stat[stat.rindex(")") + 2 :].split()
        ticks = int(fields[19])  # field 22 of stat(5); fields after the command start at field 3
        return btime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, StopIteration, IndexError):
        return None


def is_local(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in LOCAL_HOSTS or host.startswith("127.")


def local_uptime(url: str) -> tuple[float | None, int | None]:
    """(uptime in seconds, pid) of the local process serving `url`, when /proc tells."""
    if not is_local(url) or not os.path.isdir("/proc/net"):
        return None, None
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    pid = listening_pid(port)
    if pid is None:
        return None, None
    started = process_started_at(pid)
    if started is None:
        return None, pid
    return max(clock.wall() - started, 0.0), pid


def server_uptime(url: str, started_at: datetime | None) -> tuple[float | None, str | None]:
    """(seconds the server at `url` has been up, where that came from); a given start time wins over /proc."""
    if started_at is not None:
        if started_at.tzinfo is None:
            started_at = started_at.replace(tzinfo=clock.UTC)
        return clock.wall() - started_at.timestamp(), "--server-started-at"
    uptime, pid = local_uptime(url)
    if uptime is not None:
        return uptime, f"/proc (pid {pid})"
    return None, None


def settle(
    url: str, started_at: datetime | None, wait_until: float | None, say: Callable[[str], None]
) -> tuple[float | None, str | None]:
    """The server's uptime and its source (`server_uptime`); with `wait_until` (--wait-for-uptime), first wait
    until the server has been up that many seconds."""
    uptime, source = server_uptime(url, started_at)
    if wait_until is not None:
        if uptime is None:
            raise UsageError("--wait-for-uptime needs a known uptime: a local server, or --server-started-at")
        if uptime < wait_until:
            wait = wait_until - uptime
            say(f"server up {uptime:.0f} s; waiting {wait:.0f} s until it has been up {wait_until:g} s")
            time.sleep(wait)
            uptime += wait
    return uptime, source
