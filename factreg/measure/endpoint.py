"""The endpoint's own evidence: was the probed server kept from running, or busy with other traffic?

A probe measures a server. The speed of the machine the probe runs on says nothing about a server elsewhere,
and about a server on this machine only whether that server itself got a CPU. So a probe's measurement is
never scaled by the client's speed; what can excuse a slower result is evidence about the server:

1. **Where it runs** (`locality`): local when the URL's host resolves to an address of this machine's
   interfaces (`/proc/net/fib_trie`, `/proc/net/if_inet6`, the loopback range), remote otherwise.
2. **A local server's scheduling** (`measure/sched.py`): the process listening on the port is found in /proc
   (`uptime.listening_pid`) and the run-queue delay and CPU time of all its threads are read over the run, with
   the machine's steal and CPU pressure and the busiest other processes. `denied` = (run-queue delay + steal's
   share of its CPU time) per second in which the probe had a request at the server (the union of the requests'
   spans; the whole run when they are not known): waiting while idle between requests delays nothing. When the process cannot be found or read (another user's
   service, a container's port mapping) that is said, and the machine-wide CPU pressure (the share of the run in
   which some task waited for a CPU) stands in for it, an upper bound.
3. **Other traffic** (`measure/serverload.py`): the server's own Prometheus gauges of running and waiting
   requests, less the probe's own in flight.
4. **The client** (remote endpoints): the probe's own run-queue delay, kept as information. Reads of `http://`
   replies are timed by the kernel's receive stamps, so a starved client does not make the server look slow;
   a verdict notes the client's delay for a metric only when it could amount to `CLIENT_NOTE_SHARE` of it.

All of it is kept as the info condition `server_state` (compact JSON) of a fact and of each verification.

`adjust` then amends the statistics' verdict (docs/machine.md):

- a difference in the direction the evidence explains (the side that was hindered looks slower) and a server that
  was **busy** on that side → `inconclusive`, "server busy: N other requests running";
- else a side **denied** the CPU for a share *d* of its run: that side taken at its best (a latency × (1 − d), a
  rate ÷ (1 − d)) and judged again; still refuted → `refuted` (the slowdown is larger than all the waiting could
  make it), else `inconclusive`, naming the share and the competing processes;
- a difference the other way, a server that ran unhindered, a remote server: judged as measured.

A confirmation is never withdrawn by this evidence: a hindered server that still matched the fact holds it.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from factreg.measure import machine, machinestate, sched, serverload

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.measure.measurement import Measurement
    from factreg.registry.types import FactData

KEY = "server_state"
DENIED_SIGNIFICANT = 0.02  # a server kept from a CPU for under 2% of the run is taken as unhindered
CLIENT_NOTE_SHARE = 0.05
MAX_DENIED = 0.95


# ---------------------------------------------------------------- where the server runs


def local_addresses(proc: str = "/proc") -> set[str]:
    """This machine's interface addresses (IPv4 from the kernel's LOCAL routes, IPv6 from if_inet6)."""
    found = {"127.0.0.1", "::1"}
    try:
        with open(f"{proc}/net/fib_trie", encoding="ascii") as fh:
            last = None
            for line in fh:
                text = line.strip()
                if text.startswith("|--"):
                    last = text[3:].strip()
                elif text.startswith("/32 host LOCAL") and last:
                    found.add(last)
    except OSError:
        pass
    try:
        with open(f"{proc}/net/if_inet6", encoding="ascii") as fh:
            for line in fh:
                raw = line.split()[0] if line.split() else ""
                if len(raw) == 32:
                    found.add(str(ipaddress.IPv6Address(bytes.fromhex(raw))))
    except (OSError, ValueError):
        pass
    return found


def _is_loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.is_loopback or (isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None
                              and ip.ipv4_mapped.is_loopback)  # fmt: skip


def resolve(host: str) -> list[str]:
    """The addresses a host name stands for (an address literal stands for itself); [] when it does not resolve."""
    host = host.strip("[]")
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    if host.lower() in ("localhost", "ip6-localhost"):
        return ["127.0.0.1"]
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return sorted({str(info[4][0]).split("%", 1)[0] for info in infos})


def locality(url: str) -> tuple[bool, str]:
    """(local, why): whether the URL's host is one of this machine's addresses."""
    host = urlsplit(url).hostname or ""
    addresses = resolve(host)
    if not addresses:
        return False, f"{host or 'the host'} does not resolve here: taken as remote"
    mine = local_addresses()
    local = [a for a in addresses if _is_loopback(a) or a in mine]
    if local:
        return True, f"{host} is this machine ({local[0]})"
    return False, f"{host} ({addresses[0]}) is not an address of this machine"


# ---------------------------------------------------------------- watching a run


@dataclass
class Evidence:
    """What was watched around one probe run: kept as the `server_state` info condition."""

    data: dict[str, Any]
    machine_state: dict[str, Any] | None = None

    def condition(self) -> str:
        return json.dumps(self.data, sort_keys=True, separators=(",", ":"))


class Watch:
    """Brackets a probe run: the server's scheduling (local), its load (/metrics), the client's own delay."""

    def __init__(self, url: str, headers: Mapping[str, str] | None = None, metrics: bool = True) -> None:
        self.url = url
        self.local, self.where = locality(url)
        self.pid: int | None = None
        self.why_unread = ""
        self.server: sched.Watch | None = None
        self.client = sched.watch_self()
        self.machine = machine.Watch()
        self.load = serverload.Sampler(url, dict(headers or {})) if metrics else None

    def start(self) -> Watch:
        from factreg.measure import uptime

        if self.local:
            try:
                parts = urlsplit(self.url)
                port = parts.port or (443 if parts.scheme == "https" else 80)
                self.pid = uptime.listening_pid(port)
            except (OSError, ValueError):
                self.pid = None
            if self.pid is None:
                self.why_unread = "the process listening on the port could not be found (another user's service, " \
                                  "or a container's port mapping)"
            else:
                self.server = sched.watch_process(self.pid).start()
        self.machine.exclude = {self.pid} if self.pid else set()
        self.machine.start()
        self.client.start()
        if self.load is not None:
            self.load.start()
        return self

    def stop(self, spans: Sequence[tuple[float, float]] = ()) -> Evidence:
        if self.load is not None:
            self.load.stop()
        client = self.client.stop()
        server = self.server.stop() if self.server is not None else None
        state = self.machine.stop()
        data: dict[str, Any] = {"local": self.local, "where": self.where}
        if self.local:
            if server is not None and server.readable:
                data["server"] = {"pid_found": True, **server.as_data()}
                busy_s = covered(spans)
                if 0 < busy_s < server.wall_s:  # per second the server had the probe's requests, not idle ones
                    server.wall_s = busy_s
                    data["server"]["requests_s"] = round(busy_s, 4)
                denied = server.denied_share()
                if denied is not None:
                    data["denied"] = round(denied, 4)
            else:
                data["server"] = {"pid_found": self.pid is not None,
                                  "why": (server.why if server is not None else "") or self.why_unread}
                pressure = client.pressure
                steal = client.steal or 0.0
                if pressure is not None:  # the machine-wide stand-in: some task waited this share of the run
                    data["denied"] = round(max(pressure, steal), 4)
                    data["denied_source"] = "machine-wide CPU pressure"
        data["client"] = client.as_data()
        if state.get("top"):
            data["top"] = state["top"]
        if self.load is not None:
            data["load"] = serverload.summary(self.load, spans)
        return Evidence(data, state)


def covered(spans: Sequence[tuple[float, float]]) -> float:
    """Seconds during which at least one of the spans was open (their union's length)."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def spans_of_requests(requests: Any) -> list[tuple[float, float]]:
    """The probe's own requests as (start, end) on the monotonic clock, from `ProbeResult.as_json()["requests"]`."""
    out: list[tuple[float, float]] = []
    if not isinstance(requests, list):
        return out
    for r in requests:
        if not isinstance(r, Mapping):
            continue
        started = r.get("started_s")
        events = r.get("events_s")
        end = events.get("end") if isinstance(events, Mapping) else None
        if isinstance(started, (int, float)) and isinstance(end, (int, float)):
            out.append((float(started), float(started) + float(end)))
    return out


def bracket_probe(url: str, headers: Mapping[str, str] | None, fn: Callable[[], Any],
                  spans: Callable[[Any], list[tuple[float, float]]]) -> tuple[Any, Evidence]:  # fmt: skip
    """Run `fn` (a probe) watched; (its result, the evidence). Exceptions of `fn` pass through; the watch never
    raises."""
    try:
        watch: Watch | None = Watch(url, headers).start()
    except Exception:  # noqa: BLE001 - evidence is never a reason to fail
        watch = None
    result = fn()
    if watch is None:
        return result, Evidence({"error": "the server could not be watched"})
    try:
        got = spans(result)
    except Exception:  # noqa: BLE001
        got = []
    try:
        return result, watch.stop(got)
    except Exception as exc:  # noqa: BLE001
        return result, Evidence({"error": f"the server could not be watched ({type(exc).__name__})"})


# ---------------------------------------------------------------- reading and judging


def parse(text: Any) -> dict[str, Any]:
    return machine.parse(text)


def of_fact(fact: Mapping[str, Any]) -> dict[str, Any]:
    return parse(((fact.get("conditions") or {}).get("info") or {}).get(KEY))


def busy(ev: Mapping[str, Any]) -> float | None:
    """How many other requests the server ran at the most, when its own gauges said it was busy."""
    load = ev.get("load")
    if isinstance(load, Mapping) and load.get("available") and load.get("busy"):
        value = load.get("other_max")
        return float(value) if isinstance(value, (int, float)) else 1.0
    return None


def denied(ev: Mapping[str, Any]) -> float | None:
    value = ev.get("denied")
    return float(value) if isinstance(value, (int, float)) and value >= 0 else None


competitors = machinestate.competitors


summary = machinestate.server_summary


def _worse(rel_diff: float | None, direction: str | None) -> bool | None:
    """Whether the new measurement is worse (slower) than the fact; None when it cannot be told."""
    if rel_diff is None or rel_diff == 0:
        return None
    return rel_diff > 0 if direction == "lower" else rel_diff < 0


def _at_best(side: Any, share: float, direction: str | None) -> Any:
    """A side as it would have been had its server not been kept from a CPU for `share` of the run."""
    from factreg.stats.verdict import Side

    k = 1 - min(share, MAX_DENIED)
    factor = k if direction == "lower" else 1 / k
    return Side(side.mean * factor, side.sd * factor if side.sd is not None else None, side.n)


def client_note(fact: Mapping[str, Any], ev: Mapping[str, Any], n_requests: int | None) -> str:
    """A note when the client itself waited for a CPU long enough to matter for this metric (remote endpoints)."""
    client = ev.get("client")
    if not isinstance(client, Mapping) or not client.get("readable"):
        return ""
    wait = client.get("wait_s")
    value = fact.get("value")
    if not isinstance(wait, (int, float)) or not isinstance(value, (int, float)) or value <= 0 or not n_requests:
        return ""
    if fact.get("unit") not in ("s", "ms"):
        return ""
    per_request = wait / n_requests * (1000 if fact.get("unit") == "ms" else 1)
    if per_request < CLIENT_NOTE_SHARE * value:
        return ""
    return (f"the client itself waited for a CPU {per_request:.3g} {fact['unit']} per request "
            f"({per_request / value * 100:.0f}% of this metric's value): part of it may be the client's")


def adjust(fact: FactData, m: Measurement, result: dict[str, Any], settings: Settings | None) -> dict[str, Any]:
    """The verdict with the endpoint's own evidence taken into account (see the module's docstring)."""
    from factreg.measure import judge as judging
    from factreg.verdicts import Verdict

    then, now = of_fact(fact), parse(m.observed.get(KEY))
    result["server"] = {"fact": then, "now": now}
    verdict = result.get("verdict")
    if verdict not in (Verdict.CONFIRMED, Verdict.REFUTED, Verdict.INCONCLUSIVE) or not now:
        return result
    note = client_note(fact, now, m.n) if not now.get("local") else ""
    if note:
        result["message"] += f"; {note}"
    worse = _worse(result.get("rel_diff"), fact.get("direction"))
    if verdict != Verdict.REFUTED or worse is None:
        if now.get("local") or busy(now) is not None:
            result["message"] += f"; server now: {summary(now)}"
        return result
    hindered, side_name = (now, "now") if worse else (then, "when the fact was measured")
    others = busy(hindered)
    if others is not None:
        result["as_measured"] = str(verdict)
        result["verdict"] = Verdict.INCONCLUSIVE
        result["excused_by"] = "server_busy"
        result["message"] = (f"server busy: {others:g} other requests running {side_name} (its own "
                             f"/metrics), so a slower result says nothing about the fact (as measured: "
                             f"{result['message']})")
        return result
    share = denied(hindered) if hindered.get("local") else None
    if share is None or share < DENIED_SIGNIFICANT:
        if not now.get("local"):
            result["message"] += "; a remote server: the client's speed does not excuse it"
        elif worse:
            result["message"] += f"; the server ran unhindered ({summary(now)})"
        else:
            result["message"] += "; faster than the fact, and nothing shows that the fact's own run was hindered"
        return result
    tolerance = float(result.get("tolerance") or judging.tolerance_for(fact, settings))
    alpha = float(settings.get("verify.alpha", judging.DEFAULT_ALPHA)) if settings is not None else 0.05
    old, new = judging.old_side(fact), judging.new_side(m.samples, m.value, m.spread, m.n)
    if new is None:
        return result
    if worse:
        new = _at_best(new, share, fact.get("direction"))
    else:
        old = _at_best(old, share, fact.get("direction"))
    outcome = judging.compare(old, new, tolerance, alpha, unit=fact["unit"])
    source = " (machine-wide CPU pressure: the server's own process could not be read)" \
        if hindered.get("denied_source") else ""
    busiest = competitors(hindered)
    what = (f"the server was kept from a CPU {share * 100:.0f}% of the run {side_name}{source}"
            + (f"; busiest: {busiest}" if busiest else ""))
    result["denied"] = {"share": round(share, 4), "side": "now" if worse else "fact", "verdict": str(outcome.verdict),
                        "rel_diff": outcome.rel_diff}  # fmt: skip
    raw = result.get("rel_diff")
    overshoot = outcome.rel_diff is not None and raw is not None and raw * outcome.rel_diff < 0
    if outcome.verdict == Verdict.REFUTED and not overshoot:
        result["message"] += f"; {what}, which cannot account for it: refuted even had it never waited"
        return result
    result["as_measured"] = str(verdict)
    result["verdict"] = Verdict.INCONCLUSIVE
    result["excused_by"] = "server_cpu_wait"
    result["message"] = (f"{what}: without that wait the measurement could agree with the fact "
                         f"(as measured: {result['message']})")
    return result
