# A trace begun by the official MCP Python SDK 2.x client: the current OpenTelemetry
# context is set with the OpenTelemetry API alone (no SDK: a non-recording span of a known
# trace), and the SDK's client injects it into each request's `params._meta` (SEP-414).
# Usage: <py-2026-07-28 venv>/bin/python traced_client.py <url> <trace id hex> <span id hex>
# Prints one JSON line.
import json
import sys

import anyio
from opentelemetry import context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags


async def main(url, trace_id, span_id):
    parent = SpanContext(
        int(trace_id, 16),
        int(span_id, 16),
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    context.attach(trace.set_span_in_context(NonRecordingSpan(parent)))
    from mcp import Client

    async with Client(url, mode="2026-07-28") as client:
        result = await client.call_tool("test_simple_text", {})
    is_error = getattr(result, "is_error", None)
    if is_error is None:
        is_error = getattr(result, "isError", None)
    print(json.dumps({"ok": True, "isError": bool(is_error)}))


anyio.run(main, *sys.argv[1:4])
