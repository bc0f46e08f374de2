// The MCP Apps host page of tests/apps.rs (bundled by drive.mjs with esbuild): the official
// TypeScript client connects to the server, calls the tool, reads the `ui://` resource its
// `_meta.ui.resourceUri` names, and renders that HTML in a sandboxed iframe joined to the
// server through the official host side (`AppBridge`). What it saw goes to `window.hostState`.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  buildAllowAttribute,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const state = (window.hostState = { phase: "starting" });
const TOOL = "counter";
const ARGS = { start: 41 };

// The extension's `_meta.ui.csp` as a policy the iframe's document carries: what is not
// declared is refused (no outside origin at all by default), inline script and style allowed
// since an app is one HTML document.
function policy(csp) {
  const list = (domains) => (domains && domains.length ? " " + domains.join(" ") : "");
  const res = list(csp && csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline'${res}`,
    `style-src 'unsafe-inline'${res}`,
    `img-src data:${res}`,
    `font-src${res || " 'none'"}`,
    `connect-src${list(csp && csp.connectDomains) || " 'none'"}`,
  ].join("; ");
}

async function main() {
  const server = new URL(new URLSearchParams(location.search).get("server"));
  const client = new Client(
    { name: "apps-test-host", version: "1.0.0" },
    { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(server));
  state.serverCapabilities = client.getServerCapabilities();
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === TOOL);
  state.tools = tools.map((t) => ({ name: t.name, _meta: t._meta }));
  const uri = getToolUiResourceUri(tool);
  state.resourceUri = uri;
  const result = await client.callTool({ name: TOOL, arguments: ARGS });
  state.toolResult = result;
  const read = await client.readResource({ uri });
  const contents = read.contents.find((c) => c.uri === uri);
  state.contents = { uri: contents.uri, mimeType: contents.mimeType, _meta: contents._meta };
  if (contents.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`not an app: ${contents.mimeType}`);
  const ui = (contents._meta && contents._meta.ui) || {};

  const iframe = document.createElement("iframe");
  // No allow-same-origin: the app runs in an opaque origin, apart from the host's.
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.setAttribute("allow", buildAllowAttribute(ui.permissions));
  iframe.style.border = ui.prefersBorder ? "2px solid #888" : "none";
  iframe.style.width = "480px";
  iframe.style.height = "260px";
  document.getElementById("apps").append(iframe);

  const bridge = new AppBridge(
    client,
    { name: "apps-test-host", version: "1.0.0" },
    { serverTools: {}, serverResources: {}, openLinks: {}, logging: {} },
  );
  bridge.oninitialized = async () => {
    state.appCapabilities = bridge.getAppCapabilities() || null;
    await bridge.sendToolInput({ arguments: ARGS });
    await bridge.sendToolResult(result);
    state.phase = "rendered";
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  const head = `<meta http-equiv="Content-Security-Policy" content="${policy(ui.csp)}">`;
  iframe.srcdoc = contents.text.replace(/<head>/i, (h) => h + head);
}

main().catch((e) => {
  state.phase = "failed";
  state.error = String((e && e.stack) || e);
});
