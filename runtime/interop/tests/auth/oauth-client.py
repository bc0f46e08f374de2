"""An official MCP Python SDK client (py-* ids of ../clients/client.py) connecting to a protected server through the
SDK's own OAuth support (`OAuthClientProvider`, an httpx auth flow): on the server's 401 (or, in mcp 1.9.x, before
the first request) the SDK discovers the authorization server, registers itself dynamically, starts an authorization
code + PKCE flow and hands us the authorization URL; we play the browser (follow the redirects of the auto-approving
test authorization server, keeping its cookies) up to our redirect URI and hand the code back; the SDK exchanges it
and retries. Then the client lists tools and calls `test_simple_text`. Prints one JSON line, like client.py.

Usage: <venv>/bin/python oauth-client.py <client-id> --url <url>
"""

import json
import sys
from importlib.metadata import version
from urllib.parse import parse_qs, urljoin, urlparse

import anyio

try:  # mcp 2.x speaks HTTP through httpx2, 1.x through httpx
    import httpx2 as httpx
except ImportError:
    import httpx

from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URL = "http://localhost:53682/callback"
MODES = {"py-2026-07-28-pinned": "2026-07-28", "py-2026-07-28-auto": "auto"}
LEGACY = {"py-2025-03-26", "py-2025-06-18", "py-2025-11-25"}


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


seen = {}


async def redirect_handler(authorization_url: str) -> None:
    """The browser: follow the authorization server's redirects, with its cookies, up to our redirect URI."""
    seen["authorizationUrl"] = authorization_url
    hops = []
    url = authorization_url
    async with httpx.AsyncClient(follow_redirects=False, timeout=30) as browser:
        for _ in range(20):
            if url.startswith(REDIRECT_URL):
                seen["callback"] = {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}
                seen["hops"] = hops
                return
            response = await browser.get(url)
            hops.append(f"{response.status_code} {urlparse(url).path}")
            location = response.headers.get("location")
            if not (300 <= response.status_code < 400 and location):
                raise RuntimeError(f"the authorization server stopped at {url}: HTTP {response.status_code} {response.text[:300]}")
            url = urljoin(url, location)
    raise RuntimeError(f"too many redirects: {hops}")


async def callback_handler():
    callback = seen["callback"]
    if "error" in callback:
        raise RuntimeError(f"authorization failed: {callback}")
    try:  # mcp 2.x: the callback's parameters, `iss` included (RFC 9207)
        from mcp.shared.auth import AuthorizationCodeResult

        return AuthorizationCodeResult(code=callback["code"], state=callback.get("state"), iss=callback.get("iss"))
    except ImportError:
        return callback["code"], callback.get("state")


def provider(url: str) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(
        client_name="mcp-oauth-test",
        redirect_uris=[REDIRECT_URL],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        # Used only when neither the challenge nor the resource metadata names a scope.
        scope="mcp:tools",
    )
    return OAuthClientProvider(url, metadata, Memory(), redirect_handler=redirect_handler, callback_handler=callback_handler)


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(client_id: str, url: str) -> dict:
    out = {"client": client_id, "sdk": f"mcp@{version('mcp')}"}
    auth = provider(url)
    if client_id in LEGACY:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamablehttp_client

        async with streamablehttp_client(url, auth=auth) as (read, write, _):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                out["protocolVersion"] = init.protocolVersion
                out["tools"] = [t.name for t in (await session.list_tools()).tools]
                out["callResult"] = dump(await session.call_tool("test_simple_text", {}))
    elif client_id in MODES:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        transport = streamable_http_client(url, http_client=httpx.AsyncClient(auth=auth, timeout=30))
        mode = MODES[client_id]
        async with Client(transport, **({} if mode == "auto" else {"mode": mode})) as client:
            out["protocolVersion"] = client.protocol_version
            out["tools"] = [t.name for t in (await client.list_tools()).tools]
            out["callResult"] = dump(await client.call_tool("test_simple_text", {}))
    else:
        raise ValueError(f"unknown client id {client_id}")
    query = parse_qs(urlparse(seen["authorizationUrl"]).query)
    out["authorizationRequest"] = {
        "origin": "{0.scheme}://{0.netloc}".format(urlparse(seen["authorizationUrl"])),
        "resource": query.get("resource", [None])[0],
        "scope": query.get("scope", [None])[0],
        "codeChallengeMethod": query.get("code_challenge_method", [None])[0],
        "registeredClient": query.get("client_id", [None])[0],
    }
    out["callbackHadIss"] = "iss" in seen["callback"]
    out["hops"] = seen["hops"]
    out["ok"] = True
    return out


def main() -> int:
    args = sys.argv[1:]
    if len(args) != 3 or args[1] != "--url":
        print("usage: oauth-client.py <client-id> --url <url>", file=sys.stderr)
        return 2
    client_id, url = args[0], args[2]

    async def bounded():
        with anyio.fail_after(60):
            return await run(client_id, url)

    try:
        out = anyio.run(bounded)
        code = 0
    except BaseException as e:  # noqa: BLE001 - reported as JSON, like client.py
        import traceback

        traceback.print_exc()
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]
        out, code = {"client": client_id, "ok": False, "error": f"{type(e).__name__}: {e}"}, 1
    print(json.dumps(out), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
