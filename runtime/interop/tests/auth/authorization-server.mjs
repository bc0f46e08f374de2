// The authorization server of the OAuth interop tests (runtime/interop/tests/oauth_clients.rs): oidc-provider (pinned in
// package.json) on a loopback port, approving every authorization request at once as user `mcp-test-user`, so that
// an official SDK client can run the whole authorization code + PKCE flow unattended.
// Usage: node authorization-server.mjs   (prints `issuer http://127.0.0.1:PORT` once listening)
//
// What it issues: JWT access tokens (RS256, `typ: at+jwt`) whose `aud` is the resource the client asked for
// (RFC 8707 `resource`, as 2025-06-18+ clients send it), or, for a client that names none (2025-03-26), the default
// resource the test sets with `POST /_test/default-resource` (body: the URI). Scope `mcp:tools` belongs to every
// resource. Open dynamic client registration; a pre-registered confidential client `rs-introspector`
// (secret `introspector-secret`) may introspect; `machine` (secret `machine-secret`) gets client_credentials JWTs
// for any resource (the tests' tokens for a wrong audience), `machine-opaque` (same secret) opaque ones.
import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const SCOPE = 'mcp:tools';
let defaultResource;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-rs256', alg: 'RS256', use: 'sig' };

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: { keys: [signingKey] },
  clients: [
    {
      client_id: 'rs-introspector',
      client_secret: 'introspector-secret',
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
    {
      client_id: 'machine',
      client_secret: 'machine-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: SCOPE,
    },
    {
      client_id: 'machine-opaque',
      client_secret: 'machine-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: SCOPE,
    },
  ],
  scopes: ['openid', 'offline_access', SCOPE],
  findAccount: async (_ctx, accountId) => ({ accountId, claims: async () => ({ sub: accountId }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf ?? defaultResource,
      useGrantedResource: () => true,
      // `machine-opaque` gets opaque tokens (for introspection: oidc-provider does not introspect JWTs).
      getResourceServerInfo: (_ctx, resource, client) => ({
        scope: SCOPE,
        audience: resource,
        accessTokenTTL: 10 * 60,
        accessTokenFormat: client?.clientId === 'machine-opaque' ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  // Public clients (MCP clients register with token_endpoint_auth_method none) must use PKCE S256.
  pkce: { required: () => true },
  // The MCP clients run on this machine: their loopback redirect URIs are fine.
  clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
  // Log nothing but errors (the test prints the log when it fails).
  renderError: (ctx, out) => {
    ctx.type = 'json';
    ctx.body = out;
  },
});
provider.proxy = false;

/** The interaction step, approved at once: log in as mcp-test-user, grant whatever the client asked for. */
async function interact(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  if (prompt.name === 'login') {
    return provider.interactionFinished(req, res, { login: { accountId: 'mcp-test-user' } }, { mergeWithLastSubmission: false });
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(' '));
  }
  const grantId = await grant.save();
  return provider.interactionFinished(req, res, { consent: details.grantId ? {} : { grantId } }, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  const path = new URL(req.url, issuer).pathname;
  if (path.startsWith('/interaction/')) {
    interact(req, res).catch((err) => {
      console.error('interaction failed:', err);
      res.statusCode = 500;
      res.end(String(err));
    });
  } else if (path === '/_test/default-resource' && req.method === 'POST') {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      defaultResource = body.trim();
      res.end('ok');
    });
  } else {
    // A client that asks for no scope (the oldest SDK releases send none) gets the default one, as many servers
    // do: oidc-provider itself would deny an authorization that grants nothing.
    const url = new URL(req.url, issuer);
    if (url.pathname === '/auth' && !url.searchParams.has('scope')) {
      url.searchParams.set('scope', SCOPE);
      req.url = url.pathname + url.search;
    }
    callback(req, res);
  }
});
// Refusals are logged (the test shows this log when a client fails).
provider.on('server_error', (_ctx, err) => console.error('server_error:', err));
for (const event of ['grant.error', 'authorization.error', 'registration_create.error', 'introspection.error']) {
  provider.on(event, (_ctx, err) => console.error(`${event}: ${err.error ?? err.message}: ${err.error_description ?? ''}`));
}

console.log(`issuer ${issuer}`);
process.on('SIGTERM', () => process.exit(0));
