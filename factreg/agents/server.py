"""`factreg mcp`: the agent tools (`agents/tools.py`) served over MCP on stdio, with the official `mcp` SDK
(`pip install 'factreg[mcp]'`).

Tools: `search_facts`, `get_fact`, `check_text`, `cite`, `status`, and with `allow_write` also `record`; the
resource `facts://llms.txt`. A tool that fails returns one error line (the `Error: …` the CLI would print,
secrets masked), never a traceback. Each call opens the registry afresh, so a server left running sees facts
recorded since it started.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from factreg import secrets
from factreg.agents.tools import Tools
from factreg.errors import FactregError, UsageError

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.store import Registry

INSTRUCTIONS = (
    "factreg holds performance facts (tokens/s, time to first token, ...) with the conditions they were measured "
    "under. Before writing a performance number, call check_text on the sentence; cite numbers with the marker "
    "get_fact or cite returns. Never cite a fact whose status is not fresh or aging, or that is flagged cold or "
    "few_samples; compare values only when metric and identity conditions match."
)

T = TypeVar("T")


def build(open_registry: Callable[[bool], tuple[Settings, Registry]], allow_write: bool = False) -> Any:
    """The MCP server (an `mcp.server.MCPServer`); `open_registry(create)` gives the settings and registry per
    call (created only by `record`, as `factreg record` creates it)."""
    try:
        from mcp.server import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        raise UsageError("factreg mcp needs the MCP SDK: pip install 'factreg[mcp]'") from None

    server = MCPServer("factreg", instructions=INSTRUCTIONS, log_level="WARNING")

    def tools() -> Tools:
        s, reg = open_registry(False)
        return Tools(reg, s)

    def guarded(call: Callable[[], T]) -> T:
        try:
            return call()
        except FactregError as exc:
            raise ToolError(secrets.redact(exc.line())) from None

    @server.tool()
    def search_facts(
        query: str = "", metric: str = "", subject: str = "", status: str = "", limit: int = 50
    ) -> dict[str, Any]:
        """Search current facts: every word of `query` in the id, subject, metric, conditions or note; optional
        filters metric (ttft, e2e, tg_rate, …), subject and status (fresh, aging, stale, refuted, superseded…)."""
        return guarded(lambda: tools().search_facts(query, metric, subject, status, limit))

    @server.tool()
    def get_fact(id: str) -> dict[str, Any]:  # noqa: A002 - the name agents use
        """One fact: value, spread, n, 95% interval, conditions, status with its reason, measured_at, a summary
        of its history, and the citation marker to use (its successor's when it was superseded)."""
        return guarded(lambda: tools().get_fact(id))

    @server.tool()
    def check_text(text: str) -> dict[str, Any]:
        """Lint and check Markdown you are about to write: the performance numbers that cite no fact, each with
        the facts that could back it (a refuted or superseded one with its current value), and the citations
        that no longer hold."""
        return guarded(lambda: tools().check_text(text))

    @server.tool()
    def cite(id: str, format: str = "", asof: bool = False) -> dict[str, Any]:  # noqa: A002
        """The marker `<!-- fact: ID -->text<!-- /fact -->` to paste for a fact, with its current text; `format`
        is a Python format over value, spread, unit, n, median, … (e.g. "{value:.1f} tok/s")."""
        return guarded(lambda: tools().cite(id, format or None, asof))

    @server.tool()
    def status() -> dict[str, Any]:
        """How many facts are in each status, and the facts a document should not rely on, with the reason."""
        return guarded(lambda: tools().status())

    if allow_write:

        @server.tool()
        def record(
            id: str,  # noqa: A002
            metric: str,
            value: float | None = None,
            samples: list[float] | None = None,
            unit: str | None = None,
            spread: float | None = None,
            n: int | None = None,
            identity: dict[str, str] | None = None,
            info: dict[str, str] | None = None,
            subject: str | None = None,
            measured_at: str | None = None,
            note: str | None = None,
        ) -> dict[str, Any]:
            """Record a measurement as a fact (a new version when the id exists), validated as `factreg record`
            validates it: give value or samples, and the identity conditions its metric needs."""
            new = {"id": id, "metric": metric, "value": value, "samples": samples, "unit": unit, "spread": spread,
                   "n": n, "identity": identity, "info": info, "subject": subject, "measured_at": measured_at,
                   "note": note}

            def run() -> dict[str, Any]:
                s, reg = open_registry(True)
                return Tools(reg, s).record(new, float(s.min_uptime_s))

            return guarded(run)

    @server.resource("facts://llms.txt", name="llms.txt", mime_type="text/plain",
                     description="The registry's facts for language models: current, and those not to rely on.")
    def llms_txt() -> str:
        return str(guarded(lambda: tools().llms_txt()))

    return server


def serve(open_registry: Callable[[bool], tuple[Settings, Registry]], allow_write: bool = False) -> None:
    """Serve on stdin/stdout until the client closes them."""
    import anyio

    anyio.run(_serve_stdio, build(open_registry, allow_write))


async def _serve_stdio(server: Any) -> None:
    """`MCPServer.run_stdio_async`, with every frame the SDK could not read answered as JSON-RPC 2.0 says: -32700
    (parse error) for text that is not JSON, -32600 (invalid request) for JSON that is no JSON-RPC message, each
    with `"id": null`. The SDK hands such frames to the server as exceptions, which it drops: a client waiting for
    an answer would wait forever."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def forward() -> None:
            async with send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(SessionMessage(unreadable_frame(item)))
                    else:
                        await send.send(item)

        lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs
        async with anyio.create_task_group() as tg:
            tg.start_soon(forward)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())


def unreadable_frame(exc: Exception) -> Any:
    """The JSON-RPC error answering a frame that could not be read: -32700 when it is not JSON, else -32600."""
    import mcp_types as types

    errors = exc.errors() if hasattr(exc, "errors") else [{"type": "json_invalid"}]
    parse = any(e.get("type") == "json_invalid" for e in errors)
    code, message = (types.PARSE_ERROR, "Parse error") if parse else (types.INVALID_REQUEST, "Invalid Request")
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message))
