// Drives tests/apps.rs's host page in Debian's chromium (headless, through playwright-core):
// bundles host.js with esbuild, serves the page under the MCP server's own origin (so the
// browser's requests to /mcp are same-origin), waits until the app is rendered, clicks the
// app's button inside the sandboxed iframe, and prints what the host and the app showed as
// JSON. A screenshot of the page is saved for the test's artifacts.
// Usage: node drive.mjs INSTALL_DIR SERVER_URL SCREENSHOT_PATH TIMEOUT_MS
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [destArg, serverUrl, screenshot, timeoutArg] = process.argv.slice(2);
const dest = path.resolve(destArg);
const timeout = Number(timeoutArg || 20000);
const require = createRequire(path.join(dest, "package.json"));
const esbuild = require("esbuild");
const { chromium } = require("playwright-core");
const here = path.dirname(fileURLToPath(import.meta.url));

const built = await esbuild.build({
  entryPoints: [path.join(here, "host.js")],
  bundle: true,
  format: "esm",
  platform: "browser",
  write: false,
  nodePaths: [path.join(dest, "node_modules")],
  logLevel: "error",
});
const script = built.outputFiles[0].text;
const page_html = `<!doctype html><html><head><meta charset="utf-8"><title>MCP Apps test host</title></head>
<body><h1>MCP Apps test host</h1><div id="apps"></div><script type="module" src="host.js"></script></body></html>`;

const origin = new URL(serverUrl).origin;
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const out = { console: [] };
try {
  const page = await browser.newPage({ viewport: { width: 640, height: 420 } });
  page.on("console", (m) => out.console.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => out.console.push(`pageerror: ${e}`));
  await page.route(`${origin}/apps-host/**`, (route) => {
    const url = new URL(route.request().url());
    if (url.pathname.endsWith("/host.js")) {
      return route.fulfill({ contentType: "text/javascript", body: script });
    }
    return route.fulfill({ contentType: "text/html", body: page_html });
  });
  await page.goto(`${origin}/apps-host/index.html?server=${encodeURIComponent(serverUrl)}`);
  await page.waitForFunction(
    () => window.hostState && ["rendered", "failed"].includes(window.hostState.phase),
    null,
    { timeout },
  );
  out.host = await page.evaluate(() => window.hostState);
  if (out.host.phase === "rendered") {
    out.sandbox = await page.locator("#apps iframe").getAttribute("sandbox");
    const app = page.frameLocator("#apps iframe");
    await app.locator("#status", { hasText: "ready" }).waitFor({ timeout });
    await app.locator("#count", { hasText: "41" }).waitFor({ timeout });
    out.countBefore = await app.locator("#count").textContent();
    await app.locator("#plus").click({ timeout });
    await app.locator("#status", { hasText: /incremented|error/ }).waitFor({ timeout });
    out.status = await app.locator("#status").textContent();
    out.countAfter = await app.locator("#count").textContent();
    const frame = page.frames().find((f) => f !== page.mainFrame());
    out.appOrigin = await frame.evaluate(() => window.origin);
    out.appPolicy = await frame.evaluate(
      () => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content ?? null,
    );
  }
  await page.screenshot({ path: screenshot });
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + "\n");
