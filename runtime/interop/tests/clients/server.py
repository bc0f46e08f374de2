# An MCP server built on the official Python SDK (FastMCP in mcp 1.x, MCPServer in 2.x), run with one of the pinned
# venvs: the third-party server mcp-bridge is tested in front of (py-2025-06-18: mcp==1.23.0, which speaks 2025-06-18
# and older), and one of the real servers the client is tested against (tests/client_interop.rs, every venv).
# It offers what client.py / client.mjs ask for: tools test_simple_text, test_sampling (asks the client's model; 1.x),
# test_elicitation (asks the user; mcp 1.10+), test_tool_with_progress; resource test://static-text; prompt
# test_simple_prompt; and for the bridge's tests test_counted_asks (counts its runs, asks twice), the template
# test://counted/{item} and prompt test_counted_prompt (the same, mcp 1.1x+) and test_add_items (changes every list at
# run time, mcp 1.x).
# Usage: <venv>/bin/python server.py [--http PORT]      (stdio, or Streamable HTTP at http://127.0.0.1:PORT/mcp)
import json
import sys

from pydantic import BaseModel

try:
    from mcp.server.fastmcp import Context, FastMCP as Server
except ModuleNotFoundError:  # mcp 2.x
    from mcp.server.mcpserver import Context, MCPServer as Server
from mcp.types import SamplingMessage, TextContent

mcp = Server("python-sdk-server")


@mcp.tool()
def test_simple_text() -> str:
    """Returns a simple text response"""
    return "This is a simple text response for testing."


@mcp.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model"""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=100,
        related_request_id=ctx.request_id,
    )
    text = result.content.text if result.content.type == "text" else ""
    return f"LLM response: {text}"


class Details(BaseModel):
    username: str
    email: str


@mcp.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user"""
    answer = await ctx.elicit(message=message, schema=Details)
    content = answer.data.model_dump() if answer.action == "accept" else {}
    return f"User response: action={answer.action}, content={json.dumps(content, separators=(',', ':'))}"


@mcp.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50, 100"""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100)
    return "Progress reported"


# How often test_counted_asks started (mcp-bridge must not start an upstream call again for each input_required round
# of a 2026-07-28 client).
RUNS = {"counted": 0}


@mcp.tool()
async def test_counted_asks(ctx: Context) -> str:
    """Counts its runs, then asks the client's model twice, one question after the other"""
    RUNS["counted"] += 1
    run = RUNS["counted"]
    answers = []
    for question in ("First question?", "Second question?"):
        result = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=question))],
            max_tokens=100,
            related_request_id=ctx.request_id,
        )
        answers.append(result.content.text if result.content.type == "text" else "")
    return f"run {run}: {' | '.join(answers)}"


@mcp.tool()
async def test_add_items(ctx: Context) -> str:
    """Adds a tool, a resource, a resource template and a prompt, then announces the three list changes (mcp 1.x)"""

    def test_added_tool() -> str:
        """Added at run time"""
        return "added tool"

    def added_resource() -> str:
        return "added resource"

    def added_template(item: str) -> str:
        return f"added template item {item}"

    def test_added_prompt() -> str:
        """Added at run time"""
        return "added prompt"

    mcp.add_tool(test_added_tool)
    mcp.resource("test://added", mime_type="text/plain")(added_resource)
    mcp.resource("test://added/{item}", mime_type="text/plain")(added_template)
    mcp.prompt()(test_added_prompt)
    await ctx.session.send_tool_list_changed()
    await ctx.session.send_resource_list_changed()
    await ctx.session.send_prompt_list_changed()
    return "added"


@mcp.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource"""
    return "This is the content of the static text resource."


@mcp.prompt()
def test_simple_prompt() -> str:
    """A simple prompt"""
    return "This is a simple prompt for testing."


# A resource template and a prompt that count their runs and ask the client's model, as test_counted_asks does (the
# bridge must not read or get them upstream again for each input_required round). FastMCP hands templates and
# prompts a Context from mcp 1.1x on; older SDKs lack them.
try:
    from mcp.server.fastmcp.utilities.context_injection import find_context_parameter  # noqa: F401

    CONTEXT_IN_TEMPLATES = True
except ModuleNotFoundError:
    CONTEXT_IN_TEMPLATES = False


async def ask_twice(ctx: Context, who: str) -> str:
    answers = []
    for question in (f"First {who} question?", f"Second {who} question?"):
        result = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=question))],
            max_tokens=100,
            related_request_id=ctx.request_id,
        )
        answers.append(result.content.text if result.content.type == "text" else "")
    return " | ".join(answers)


if CONTEXT_IN_TEMPLATES:

    @mcp.resource("test://counted/{item}", mime_type="text/plain")
    async def counted_resource(item: str, ctx: Context) -> str:
        """Counts its reads, then asks the client's model twice"""
        RUNS["resource"] = RUNS.get("resource", 0) + 1
        run = RUNS["resource"]
        return f"read {run} of {item}: {await ask_twice(ctx, 'resource')}"

    @mcp.prompt()
    async def test_counted_prompt(ctx: Context) -> str:
        """Counts its runs, then asks the client's model twice"""
        RUNS["prompt"] = RUNS.get("prompt", 0) + 1
        run = RUNS["prompt"]
        return f"prompt {run}: {await ask_twice(ctx, 'prompt')}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        port = int(sys.argv[2])
        if hasattr(mcp.settings, "port"):  # mcp 1.x: FastMCP settings
            mcp.settings.host = "127.0.0.1"
            mcp.settings.port = port
            mcp.run(transport="streamable-http")
        else:
            mcp.run(transport="streamable-http", host="127.0.0.1", port=port)
    else:
        mcp.run()
