# An MCP server built on the official Python SDK's FastMCP, run with one of the pinned venvs (py-2025-06-18:
# mcp==1.23.0, which speaks 2025-06-18 and older): the third-party server the bridge tests put behind mcp-bridge.
# It offers what client.py / client.mjs ask for: tools test_simple_text, test_sampling (asks the client's model),
# test_elicitation (asks the user), test_tool_with_progress; resource test://static-text; prompt test_simple_prompt.
# Usage: <venv>/bin/python server.py            (stdio)
import json

from pydantic import BaseModel

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent

mcp = FastMCP("python-sdk-server")


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


@mcp.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource"""
    return "This is the content of the static text resource."


@mcp.prompt()
def test_simple_prompt() -> str:
    """A simple prompt"""
    return "This is a simple prompt for testing."


if __name__ == "__main__":
    mcp.run()
