// An official MCP TypeScript SDK client (ts-* ids of ../clients/client.mjs) connecting to a protected server through
// the SDK's own OAuth support: the first request is refused 401, the SDK discovers the authorization server from the
// challenge (or, in the oldest releases, from the server's origin), registers itself dynamically, starts an
// authorization code + PKCE flow and hands us the authorization URL; we play the browser (follow the redirects of
// the auto-approving test authorization server, keeping its cookies) up to our redirect URI, give the SDK the code
// (finishAuth), reconnect, list tools and call `test_simple_text`. Prints one JSON line, like client.mjs. A URL
// ending in /sse uses the SDK's HTTP+SSE client transport (2024-11-05), any other its Streamable HTTP one.
// Usage: node oauth-client.mjs <client-id> --url <url>   (run from beside the SDKs' node_modules: oauth_clients.rs
// copies it there)
import { readFileSync } from 'node:fs';

const ALIASES = {
  // Releases older than the 2025-03-26 revision already carry its OAuth client (metadata at the server's origin).
  'ts-2024-11-05': { alias: 'sdk-2024-11-05' },
  'ts-sse-1.9.0': { alias: 'sdk-sse-1.9.0' },
  'ts-2025-03-26': { alias: 'sdk-2025-03-26' },
  'ts-2025-06-18': { alias: 'sdk-2025-06-18' },
  'ts-2025-11-25': { alias: 'sdk-2025-11-25' },
  'ts-2026-07-28-pinned': { alias: 'client-2026-07-28', negotiation: { mode: { pin: '2026-07-28' } } },
  'ts-2026-07-28-auto': { alias: 'client-2026-07-28', negotiation: { mode: 'auto' } },
};
const REDIRECT_URL = 'http://localhost:53682/callback';

const [id, flag, url] = process.argv.slice(2);
const spec = ALIASES[id];

function finish(obj, code) {
  process.stdout.write(JSON.stringify(obj) + '\n', () => process.exit(code));
}

/** The browser: GET the authorization URL and follow redirects (with cookies) until one leads to our redirect URI. */
async function browse(start) {
  const cookies = new Map();
  let next = new URL(start);
  const hops = [];
  for (let i = 0; i < 20; i++) {
    if (next.href.startsWith(REDIRECT_URL)) return { params: next.searchParams, hops };
    const res = await fetch(next, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    hops.push(`${res.status} ${next.pathname}`);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) {
      throw new Error(`the authorization server stopped at ${next.href}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
    }
    next = new URL(location, next);
  }
  throw new Error(`too many redirects: ${hops.join(', ')}`);
}

async function run() {
  if (!spec || flag !== '--url' || !url) throw new Error(`usage: oauth-client.mjs <${Object.keys(ALIASES).join('|')}> --url <url>`);
  const pkgDir = new URL(`./node_modules/${spec.alias}/`, import.meta.url);
  const pkg = JSON.parse(readFileSync(new URL('package.json', pkgDir), 'utf8'));
  const v2 = pkg.name === '@modelcontextprotocol/client';
  const sdk = v2 ? await import(spec.alias) : undefined;
  const { Client } = sdk ?? (await import(`${spec.alias}/client/index.js`));
  const sse = new URL(url).pathname.endsWith('/sse');
  const { StreamableHTTPClientTransport, SSEClientTransport } =
    sdk ?? (await import(`${spec.alias}/client/${sse ? 'sse' : 'streamableHttp'}.js`));
  const Transport = sse ? SSEClientTransport : StreamableHTTPClientTransport;
  const { UnauthorizedError } = sdk ?? (await import(`${spec.alias}/client/auth.js`));

  // The SDK's OAuthClientProvider, in memory. What it was asked to do is recorded for the test.
  const seen = { authorizationUrl: undefined, registered: undefined, hops: undefined };
  let clientInformation;
  let tokens;
  let codeVerifier;
  let discoveryState;
  let callback;
  const provider = {
    get redirectUrl() {
      return REDIRECT_URL;
    },
    get clientMetadata() {
      return {
        client_name: `mcp-oauth-test ${id}`,
        redirect_uris: [REDIRECT_URL],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        // Used only when neither the challenge nor the resource metadata names a scope.
        scope: 'mcp:tools',
      };
    },
    clientInformation: () => clientInformation,
    saveClientInformation: (info) => {
      clientInformation = info;
      seen.registered = info.client_id;
    },
    tokens: () => tokens,
    saveTokens: (t) => {
      tokens = t;
    },
    saveCodeVerifier: (v) => {
      codeVerifier = v;
    },
    codeVerifier: () => codeVerifier,
    // 2.x: what discovery found, kept across the redirect so that the callback is checked against the same
    // authorization server (1.x never calls these).
    saveDiscoveryState: (state) => {
      discoveryState = state;
    },
    discoveryState: () => discoveryState,
    redirectToAuthorization: async (authorizationUrl) => {
      seen.authorizationUrl = authorizationUrl.href;
      const { params, hops } = await browse(authorizationUrl);
      seen.hops = hops;
      callback = params;
    },
  };

  // 1.x clients do not expose the negotiated revision: it is read from the initialize result on the wire.
  let wireVersion;
  const connect = async () => {
    const client = new Client(
      { name: `mcp-oauth-${id}`, version: '1.0.0' },
      { capabilities: {}, ...(spec.negotiation ? { versionNegotiation: spec.negotiation } : {}) },
    );
    const transport = new Transport(new URL(url), { authProvider: provider });
    let handler;
    Object.defineProperty(transport, 'onmessage', {
      configurable: true,
      get: () => handler,
      set: (fn) => {
        handler = fn && ((msg, extra) => {
          if (wireVersion === undefined && typeof msg?.result?.protocolVersion === 'string') wireVersion = msg.result.protocolVersion;
          return fn(msg, extra);
        });
      },
    });
    await client.connect(transport);
    return { client, transport };
  };

  let connection;
  let firstAttempt;
  try {
    connection = await connect();
    firstAttempt = 'connected';
  } catch (err) {
    if (!(err instanceof UnauthorizedError) || !callback) throw err;
    if (callback.has('error')) throw new Error(`authorization refused: ${callback.toString()}`);
    firstAttempt = 'unauthorized';
    // The code goes back to the SDK, which exchanges it (with the PKCE verifier) for tokens; 2.x validates `iss`.
    const transport = new Transport(new URL(url), { authProvider: provider });
    if (v2) await transport.finishAuth(callback);
    else await transport.finishAuth(callback.get('code'));
    connection = await connect();
  }
  const { client } = connection;
  const out = { client: id, sdk: `${pkg.name}@${pkg.version}`, transport: sse ? 'sse' : 'streamable-http', firstAttempt };
  out.protocolVersion = typeof client.getNegotiatedProtocolVersion === 'function' ? client.getNegotiatedProtocolVersion() : wireVersion;
  const authorization = new URL(seen.authorizationUrl);
  out.authorizationRequest = {
    resource: authorization.searchParams.get('resource'),
    scope: authorization.searchParams.get('scope'),
    codeChallengeMethod: authorization.searchParams.get('code_challenge_method'),
    registeredClient: seen.registered,
  };
  out.callbackHadIss = callback.has('iss');
  out.hops = seen.hops;
  out.tokenType = tokens?.token_type;
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.callResult = await client.callTool({ name: 'test_simple_text', arguments: {} });
  await client.close();
  out.ok = true;
  return out;
}

const timeoutMs = 1000 * Number(process.env.MCP_CLIENT_TIMEOUT || 60);
setTimeout(() => finish({ client: id, ok: false, error: `timed out after ${timeoutMs} ms` }, 1), timeoutMs).unref();
run().then(
  (out) => finish(out, 0),
  (err) => {
    console.error(err);
    finish({ client: id, ok: false, error: String(err?.message ?? err) }, 1);
  },
);
