# Official MCP Python SDK client (py-* ids): spawns a stdio server, runs the interop scenario, prints one JSON line.
# Usage: <venv>/bin/python client.py <client-id> -- <server command> [args...]  (run-client.sh picks the venv)
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
}


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


async def run(client_id, params):
    out = {"client": client_id, "sdk": f"mcp@{version('mcp')}"}
    mode = CLIENTS[client_id]
    if mode is None:
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            out["protocolVersion"] = (await session.initialize()).protocolVersion
            await scenario(session, out)
    else:
        from mcp import Client

        async with Client(params, **({} if mode == "auto" else {"mode": mode})) as client:
            out["protocolVersion"] = client.protocol_version
            await scenario(client, out)
    out["ok"] = True
    return out


def message(exc):
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def main():
    argv = sys.argv[1:]
    client_id = argv[0] if argv else None
    if client_id not in CLIENTS or len(argv) < 3 or argv[1] != "--":
        print(f"usage: client.py <{'|'.join(CLIENTS)}> -- <command> [args...]", file=sys.stderr)
        sys.exit(2)
    params = StdioServerParameters(command=argv[2], args=argv[3:], env=dict(os.environ))

    timeout = float(os.environ.get("MCP_CLIENT_TIMEOUT", "60"))

    async def bounded():
        try:
            with anyio.fail_after(timeout):
                return await run(client_id, params)
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
