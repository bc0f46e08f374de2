// Official MCP TypeScript SDK client (ts-* ids): connects to a server (spawned over stdio, or at a URL), runs a
// scenario, prints one JSON line.
// Usage: node client.mjs <client-id> [--scenario basic|ask|poll|task] (-- <server command> [args...] | --url <url>)
//   --url .../sse  -> the SDK's HTTP+SSE client transport (2024-11-05); any other URL -> its Streamable HTTP one.
// It loads the SDKs from ./node_modules beside itself: install.sh installs them outside the source tree and
// run-client.sh runs a copy of this file placed there.
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
  // The last release before Streamable HTTP (1.10.0): its only HTTP client transport is HTTP+SSE.
  'ts-sse-1.9.0': { alias: 'sdk-sse-1.9.0' },
};

const USAGE = `usage: client.mjs <${Object.keys(CLIENTS).join('|')}> [--scenario basic|ask|poll|task] (-- <command> [args...] | --url <url>)`;
const [id, ...rest] = process.argv.slice(2);
const spec = CLIENTS[id];
let scenario = 'basic';
let url;
let command;
let args = [];
let usageError = !spec;
for (let i = 0; i < rest.length && !usageError; i++) {
  if (rest[i] === '--') {
    [command, ...args] = rest.slice(i + 1);
    usageError = !command;
    break;
  } else if (rest[i] === '--url' && i + 1 < rest.length) url = rest[++i];
  else if (rest[i] === '--scenario' && ['basic', 'ask', 'poll', 'task'].includes(rest[i + 1])) scenario = rest[++i];
  else usageError = true;
}
usageError ||= !command === !url; // exactly one of `-- command` and `--url`

// The ask scenario's canned answers: a sampling result, and an accepted elicitation whose content fills every
// requested property by type (strings "testuser", booleans true, numbers 1).
const SAMPLED = { role: 'assistant', content: { type: 'text', text: 'Paris is the capital' }, model: 'test-model' };
function elicited(schema) {
  const content = {};
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    if (prop?.type === 'string') content[key] = 'testuser';
    else if (prop?.type === 'boolean') content[key] = true;
    else if (prop?.type === 'number' || prop?.type === 'integer') content[key] = 1;
  }
  return { action: 'accept', content };
}

function finish(obj, code) {
  process.stdout.write(JSON.stringify(obj) + '\n', () => process.exit(code));
}

function pick(items, key, preferred) {
  const noRequired = (x) => !(x.inputSchema?.required?.length || x.arguments?.some((a) => a.required));
  return items.find((x) => x[key] === preferred) ?? items.find(noRequired) ?? items[0];
}

let transportName;
let transport; // closed on timeout too, so no server process outlives the client

async function run() {
  if (usageError) throw new Error(USAGE);
  const pkgDir = new URL(`./node_modules/${spec.alias}/`, import.meta.url);
  const pkg = JSON.parse(readFileSync(new URL('package.json', pkgDir), 'utf8'));
  const v2 = pkg.name === '@modelcontextprotocol/client';
  const sdk = v2 ? await import(spec.alias) : undefined;
  const { Client } = sdk ?? (await import(`${spec.alias}/client/index.js`));

  const ask = scenario === 'ask';
  const client = new Client(
    { name: `mcp-interop-${id}`, version: '1.0.0' },
    {
      capabilities: ask ? { sampling: {}, elicitation: {} } : {},
      ...(spec.negotiation ? { versionNegotiation: spec.negotiation } : {}),
    },
  );
  const asked = []; // the server-to-client requests the handlers answered, in order
  if (ask) {
    // 2.x: handlers by method name; they also fulfil 2026-07-28 input_required results (inputRequired.autoFulfill,
    // on by default), retrying the call. 1.x: handlers by request schema, answering server-to-client requests.
    let sampling = 'sampling/createMessage';
    let elicitation = 'elicitation/create';
    if (!v2) {
      const types = await import(`${spec.alias}/types.js`);
      if (!types.ElicitRequestSchema) throw new Error(`${pkg.name}@${pkg.version} has no elicitation support: the ask scenario needs 2025-06-18 or later`);
      [sampling, elicitation] = [types.CreateMessageRequestSchema, types.ElicitRequestSchema];
    }
    client.setRequestHandler(sampling, async () => {
      asked.push('sampling/createMessage');
      return SAMPLED;
    });
    client.setRequestHandler(elicitation, async (request) => {
      asked.push('elicitation/create');
      return elicited(request.params.requestedSchema);
    });
  }

  if (url === undefined) {
    const { StdioClientTransport } = await import(v2 ? `${spec.alias}/stdio` : `${spec.alias}/client/stdio.js`);
    transport = new StdioClientTransport({ command, args, env: { ...process.env } });
    transportName = 'stdio';
  } else if (new URL(url).pathname.endsWith('/sse')) {
    const { SSEClientTransport } = sdk ?? (await import(`${spec.alias}/client/sse.js`));
    transport = new SSEClientTransport(new URL(url));
    transportName = 'sse';
  } else {
    const { StreamableHTTPClientTransport } = sdk ?? (await import(`${spec.alias}/client/streamableHttp.js`).catch(() => {
      throw new Error(`${pkg.name}@${pkg.version} has no Streamable HTTP client transport: use its HTTP+SSE one (a .../sse URL)`);
    }));
    transport = new StreamableHTTPClientTransport(new URL(url));
    transportName = 'streamable-http';
  }
  // 1.x clients do not expose the negotiated version: note the protocolVersion of the initialize result on the wire.
  // Also count how the server asked (ask scenario): server-to-client requests vs 2026-07-28 input_required results.
  let wireVersion;
  const wire = { serverRequests: 0, inputRequiredResults: 0 };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (fn) => {
      handler = fn && ((msg, extra) => {
        if (wireVersion === undefined && typeof msg?.result?.protocolVersion === 'string') wireVersion = msg.result.protocolVersion;
        if (typeof msg?.method === 'string' && msg.id !== undefined) wire.serverRequests++;
        if (msg?.result?.resultType === 'input_required') wire.inputRequiredResults++;
        return fn(msg, extra);
      });
    },
  });

  await client.connect(transport);
  const out = { client: id, sdk: `${pkg.name}@${pkg.version}`, transport: transportName, scenario };
  if (typeof client.getNegotiatedProtocolVersion === 'function') {
    Object.assign(out, { protocolVersion: client.getNegotiatedProtocolVersion(), protocolVersionSource: 'client', era: client.getProtocolEra() });
  } else {
    Object.assign(out, { protocolVersion: wireVersion, protocolVersionSource: 'wire' });
  }

  const tools = (await client.listTools()).tools;
  out.tools = tools.map((t) => t.name);
  if (ask) {
    out.samplingResult = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is the capital of France?' } });
    out.elicitationResult = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    out.asked = asked;
    out.wire = wire;
    await client.close();
    out.ok = true;
    return out;
  }
  if (scenario === 'task') {
    // 2025-11-25 experimental tasks (1.x releases that have them): listTools taught the client which tools run as
    // tasks (execution.taskSupport), so callToolStream augments the call with `task`, then polls tasks/get and
    // fetches tasks/result; every message it yields is recorded.
    if (!client.experimental?.tasks) throw new Error(`${pkg.name}@${pkg.version} has no client task support`);
    out.taskMessages = [];
    const stream = client.experimental.tasks.callToolStream({ name: 'slow_compute', arguments: { seconds: 1, label: 'sdk' } });
    for await (const message of stream) {
      out.taskMessages.push(message.type);
      if (message.type === 'taskCreated') out.taskId = message.task.taskId;
      if (message.type === 'result') out.taskResult = message.result;
      if (message.type === 'error') throw message.error;
    }
    out.task = await client.experimental.tasks.getTask(out.taskId);
    out.tasksListed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    await client.close();
    out.ok = true;
    return out;
  }
  if (scenario === 'poll') {
    // test_reconnection answers after the server closed the connection of its SSE stream (2025-11-25 SSE polling):
    // the SDK must reconnect with Last-Event-ID to receive the answer.
    out.callResult = await client.callTool({ name: 'test_reconnection', arguments: {} });
    await client.close();
    out.ok = true;
    return out;
  }
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
