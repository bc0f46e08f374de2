// Official MCP TypeScript SDK client (ts-* ids): spawns a stdio server, runs the interop scenario, prints one JSON line.
// Usage: node client.mjs <client-id> -- <server command> [args...]
import { readFileSync } from 'node:fs';

// client id -> npm alias (see package.json) and the 2.x versionNegotiation option (undefined = SDK default).
const CLIENTS = {
  'ts-2024-11-05': { alias: 'sdk-2024-11-05' },
  'ts-2025-03-26': { alias: 'sdk-2025-03-26' },
  'ts-2025-06-18': { alias: 'sdk-2025-06-18' },
  'ts-2025-11-25': { alias: 'sdk-2025-11-25' },
  'ts-2026-07-28-pinned': { alias: 'client-2026-07-28', negotiation: { mode: { pin: '2026-07-28' } } },
  // The 2.x SDK's own default is 'legacy' (plain initialize); 'auto' is its opt-in server/discover probe + fallback.
  'ts-2026-07-28-auto': { alias: 'client-2026-07-28', negotiation: { mode: 'auto' } },
};

const [id, sep, command, ...args] = process.argv.slice(2);
const spec = CLIENTS[id];

function finish(obj, code) {
  process.stdout.write(JSON.stringify(obj) + '\n', () => process.exit(code));
}

function pick(items, key, preferred) {
  const noRequired = (x) => !(x.inputSchema?.required?.length || x.arguments?.some((a) => a.required));
  return items.find((x) => x[key] === preferred) ?? items.find(noRequired) ?? items[0];
}

let transport; // closed on timeout too, so no server process outlives the client

async function run() {
  if (!spec || sep !== '--' || !command) throw new Error(`usage: client.mjs <${Object.keys(CLIENTS).join('|')}> -- <command> [args...]`);
  const pkgDir = new URL(`./node_modules/${spec.alias}/`, import.meta.url);
  const pkg = JSON.parse(readFileSync(new URL('package.json', pkgDir), 'utf8'));
  const v2 = pkg.name === '@modelcontextprotocol/client';
  const { Client } = await import(v2 ? spec.alias : `${spec.alias}/client/index.js`);
  const { StdioClientTransport } = await import(v2 ? `${spec.alias}/stdio` : `${spec.alias}/client/stdio.js`);

  const client = new Client(
    { name: `mcp-interop-${id}`, version: '1.0.0' },
    { capabilities: {}, ...(spec.negotiation ? { versionNegotiation: spec.negotiation } : {}) },
  );
  transport = new StdioClientTransport({ command, args, env: { ...process.env } });
  // 1.x clients do not expose the negotiated version: note the protocolVersion of the initialize result on the wire.
  let wireVersion;
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
  const out = { client: id, sdk: `${pkg.name}@${pkg.version}` };
  if (typeof client.getNegotiatedProtocolVersion === 'function') {
    Object.assign(out, { protocolVersion: client.getNegotiatedProtocolVersion(), protocolVersionSource: 'client', era: client.getProtocolEra() });
  } else {
    Object.assign(out, { protocolVersion: wireVersion, protocolVersionSource: 'wire' });
  }

  const tools = (await client.listTools()).tools;
  out.tools = tools.map((t) => t.name);
  const tool = pick(tools, 'name', 'test_simple_text');
  out.callResult = tool ? await client.callTool({ name: tool.name, arguments: {} }) : null;

  const resources = (await client.listResources()).resources;
  out.resources = resources.map((r) => r.uri);
  const resource = pick(resources, 'uri', 'test://static-text');
  out.resource = resource ? await client.readResource({ uri: resource.uri }) : null;

  const prompts = (await client.listPrompts()).prompts;
  out.prompts = prompts.map((p) => p.name);
  const prompt = pick(prompts, 'name', 'test_simple_prompt');
  out.prompt = prompt ? await client.getPrompt({ name: prompt.name, arguments: {} }) : null;

  await client.close();
  out.ok = true;
  return out;
}

const timeoutMs = 1000 * Number(process.env.MCP_CLIENT_TIMEOUT || 60);
setTimeout(async () => {
  await Promise.race([transport?.close(), new Promise((r) => setTimeout(r, 2000))]).catch(() => {});
  finish({ client: id, ok: false, error: `timed out after ${timeoutMs} ms` }, 1);
}, timeoutMs).unref();
run().then(
  (out) => finish(out, 0),
  (err) => {
    console.error(err);
    finish({ client: id, ok: false, error: String(err?.message ?? err) }, 1);
  },
);
