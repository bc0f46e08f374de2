# Official MCP Python SDK client (py-* ids): connects to a server (spawned over stdio, or at a URL), runs a scenario,
# prints one JSON line.
# Usage: <venv>/bin/python client.py <client-id> [--scenario basic|ask|poll|task] (-- <server command> [args...] | --url <url>)
#   (run-client.sh picks the venv)   --url .../sse -> the SDK's HTTP+SSE client; any other URL -> its Streamable HTTP one.
import inspect
import json
import os
import sys
from importlib.metadata import version

import anyio
from mcp import StdioServerParameters

# client id -> connect mode: None = mcp 1.x ClientSession.initialize(); otherwise mcp 2.x Client(mode=...).
CLIENTS = {
    "py-2024-11-05": None,
    "py-2025-03-26": None,
    "py-2025-06-18": None,
    "py-2025-11-25": None,
    "py-2026-07-28-pinned": "2026-07-28",  # adopts 2026-07-28 directly, no probe, no initialize
    "py-2026-07-28-auto": "auto",  # the 2.x default: server/discover probe, fallback to initialize
    "py-sse-1.7.1": None,  # the last release before Streamable HTTP (1.8.0): HTTP+SSE is its only HTTP client
}

# The ask scenario's canned answers (see elicited()).
SAMPLED_TEXT = "Paris is the capital"
SAMPLED_MODEL = "test-model"


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def pick(items, key, preferred):
    def no_required(x):
        return not (x.get("inputSchema", {}).get("required") or any(a.get("required") for a in x.get("arguments", [])))

    return next((x for x in items if x[key] == preferred), None) or next(filter(no_required, items), None) or next(iter(items), None)


async def scenario(api, out):
    tools = dump(await api.list_tools())["tools"]
    out["tools"] = [t["name"] for t in tools]
    tool = pick(tools, "name", "test_simple_text")
    out["callResult"] = dump(await api.call_tool(tool["name"], {})) if tool else None

    resources = dump(await api.list_resources())["resources"]
    out["resources"] = [r["uri"] for r in resources]
    resource = pick(resources, "uri", "test://static-text")
    out["resource"] = dump(await api.read_resource(resource["uri"])) if resource else None

    prompts = dump(await api.list_prompts())["prompts"]
    out["prompts"] = [p["name"] for p in prompts]
    prompt = pick(prompts, "name", "test_simple_prompt")
    out["prompt"] = dump(await api.get_prompt(prompt["name"], {})) if prompt else None


async def task_scenario(session, out):
    """2025-11-25 experimental tasks (1.x releases that have them): calls slow_compute as a task, polls tasks/get
    until it ends, fetches tasks/result, lists the tasks."""
    if not hasattr(session, "experimental") or not hasattr(session.experimental, "call_tool_as_task"):
        raise RuntimeError(f"mcp@{version('mcp')} has no client task support")
    from mcp.types import CallToolResult

    out["tools"] = [t.name for t in (await session.list_tools()).tools]
    created = await session.experimental.call_tool_as_task("slow_compute", {"seconds": 1, "label": "sdk"}, ttl=60000)
    task_id = created.task.taskId
    out["taskId"] = task_id
    statuses = []
    async for status in session.experimental.poll_task(task_id):
        statuses.append(status.status)
    out["taskStatuses"] = statuses
    out["taskResult"] = dump(await session.experimental.get_task_result(task_id, CallToolResult))
    out["task"] = dump(await session.experimental.get_task(task_id))
    out["tasksListed"] = [t.taskId for t in (await session.experimental.list_tasks()).tasks]


async def ask_scenario(api, out):
    out["tools"] = [t["name"] for t in dump(await api.list_tools())["tools"]]
    out["samplingResult"] = dump(await api.call_tool("test_sampling", {"prompt": "What is the capital of France?"}))
    out["elicitationResult"] = dump(await api.call_tool("test_elicitation", {"message": "Who are you?"}))


async def poll_scenario(api, out):
    """Calls `test_reconnection`, whose answer comes after the server closed the connection of its SSE stream
    (2025-11-25 SSE polling): the SDK must reconnect with Last-Event-ID to receive it."""
    out["tools"] = [t["name"] for t in dump(await api.list_tools())["tools"]]
    out["callResult"] = dump(await api.call_tool("test_reconnection", {}))


SCENARIOS = {"basic": scenario, "ask": ask_scenario, "poll": poll_scenario, "task": task_scenario}


def ask_callbacks(asked):
    """Sampling and elicitation callbacks for the ask scenario; `asked` collects the methods answered, in order.

    1.x sessions call them for server-to-client requests; the 2.x `Client` also calls them to fulfil 2026-07-28
    `input_required` results, then retries the call itself (`input_required_max_rounds`)."""
    from mcp import types

    async def sampling(context, params):
        asked.append("sampling/createMessage")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=SAMPLED_TEXT), model=SAMPLED_MODEL
        )

    async def elicitation(context, params):
        asked.append("elicitation/create")
        schema = getattr(params, "requestedSchema", None) or getattr(params, "requested_schema", None) or {}
        return types.ElicitResult(action="accept", content=elicited(schema))

    return {"sampling_callback": sampling, "elicitation_callback": elicitation}


def elicited(schema):
    """Accepted content filling every requested property by type: strings "testuser", booleans true, numbers 1."""
    content = {}
    for key, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        if kind == "string":
            content[key] = "testuser"
        elif kind == "boolean":
            content[key] = True
        elif kind in ("number", "integer"):
            content[key] = 1
    return content


def is_sse(url):
    from urllib.parse import urlparse

    return urlparse(url).path.endswith("/sse")


def legacy_transport(target):
    """The 1.x SDK's client transport for a target: stdio parameters, a .../sse URL or a Streamable HTTP URL."""
    if not isinstance(target, str):
        from mcp.client.stdio import stdio_client

        return "stdio", stdio_client(target)
    if is_sse(target):
        from mcp.client.sse import sse_client

        return "sse", sse_client(target)
    try:
        from mcp.client import streamable_http
    except ImportError:
        raise RuntimeError(
            f"mcp@{version('mcp')} has no Streamable HTTP client transport: use its HTTP+SSE one (a .../sse URL)"
        ) from None
    # 1.24+ names it streamable_http_client (streamablehttp_client stays, deprecated); both yield 3 values.
    connect = getattr(streamable_http, "streamable_http_client", None) or streamable_http.streamablehttp_client
    return "streamable-http", connect(target)


def count_input_required(client, out):
    """Counts the 2026-07-28 input_required results the 2.x Client resolves (`wire.inputRequiredResults`), by
    wrapping its private `_drive_input_required` hook on this instance; no count where the hook is missing."""
    drive = getattr(client, "_drive_input_required", None)
    if drive is None:
        return
    from mcp.types import InputRequiredResult

    wire = out["wire"] = {"inputRequiredResults": 0}

    async def counting(first, retry):
        async def counted_retry(responses, state):
            result = await retry(responses, state)
            wire["inputRequiredResults"] += isinstance(result, InputRequiredResult)
            return result

        wire["inputRequiredResults"] += isinstance(first, InputRequiredResult)
        return await drive(first, counted_retry)

    client._drive_input_required = counting


async def run(client_id, scenario_name, target):
    out = {"client": client_id, "sdk": f"mcp@{version('mcp')}"}
    mode = CLIENTS[client_id]
    asked = []
    callbacks = ask_callbacks(asked) if scenario_name == "ask" else {}
    body = SCENARIOS[scenario_name]
    if mode is None:
        from mcp import ClientSession

        if callbacks and "elicitation_callback" not in inspect.signature(ClientSession).parameters:
            raise RuntimeError(f"mcp@{version('mcp')} has no elicitation support: the ask scenario needs 2025-06-18 or later")
        out["transport"], transport = legacy_transport(target)
        out["scenario"] = scenario_name
        async with transport as streams, ClientSession(streams[0], streams[1], **callbacks) as session:
            out["protocolVersion"] = (await session.initialize()).protocolVersion
            await body(session, out)
    else:
        from mcp import Client

        if isinstance(target, str) and is_sse(target):
            from mcp.client.sse import sse_client

            out["transport"], server = "sse", sse_client(target)
        else:
            # A URL string is the 2.x Client's own Streamable HTTP transport (stateless on 2026-07-28).
            out["transport"], server = ("stdio" if not isinstance(target, str) else "streamable-http"), target
        out["scenario"] = scenario_name
        async with Client(server, **({} if mode == "auto" else {"mode": mode}), **callbacks) as client:
            out["protocolVersion"] = client.protocol_version
            if scenario_name == "ask":
                count_input_required(client, out)
            await body(client, out)
    if scenario_name == "ask":
        out["asked"] = asked
    out["ok"] = True
    return out


def message(exc):
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def parse(argv):
    """(client id, scenario, target: StdioServerParameters or URL), or None on a usage error."""
    client_id, rest = (argv[0], argv[1:]) if argv else (None, [])
    scenario_name, url, command = "basic", None, None
    i = 0
    while i < len(rest):
        if rest[i] == "--":
            command = rest[i + 1 :]
            if not command:
                return None
            break
        if rest[i] == "--url" and i + 1 < len(rest):
            url = rest[i + 1]
        elif rest[i] == "--scenario" and i + 1 < len(rest) and rest[i + 1] in SCENARIOS:
            scenario_name = rest[i + 1]
        else:
            return None
        i += 2
    if client_id not in CLIENTS or (url is None) == (command is None):
        return None
    target = url if command is None else StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    return client_id, scenario_name, target


def main():
    parsed = parse(sys.argv[1:])
    if parsed is None:
        print(
            f"usage: client.py <{'|'.join(CLIENTS)}> [--scenario basic|ask|poll|task] (-- <command> [args...] | --url <url>)",
            file=sys.stderr,
        )
        sys.exit(2)
    client_id, scenario_name, target = parsed

    timeout = float(os.environ.get("MCP_CLIENT_TIMEOUT", "60"))

    async def bounded():
        try:
            with anyio.fail_after(timeout):
                return await run(client_id, scenario_name, target)
        except TimeoutError as exc:
            raise TimeoutError(f"timed out after {timeout:g} s") from exc

    try:
        out, code = anyio.run(bounded), 0
    except BaseException as exc:  # report every failure as one JSON line
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
        out, code = {"client": client_id, "ok": False, "error": message(exc)}, 1
    print(json.dumps(out), flush=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
