#!/usr/bin/env node
// The docs site in a real browser: serves the built site (`make docs` → target/site) on
// 127.0.0.1 and a free port, opens every page in Debian's headless Chromium (driven by
// playwright-core from tests/docs-browser; no browser is downloaded) and fails on:
//   - a page that does not load, or throws a script error;
//   - an internal link to a page that does not exist, or to an `#anchor` no element of
//     that page has as its id (mkdocs' own check does not see the theme's links);
//   - the language tabs not working: on the Tools page a click on the "Go" tab label must
//     show the Go panel, switch every tab group of the page to Go (`content.tabs.link`) and
//     keep Go chosen on the next page opened; on the MCP page (several tab groups) a click
//     on "Ruby" in one group must switch every group.
// It saves a full-page screenshot of the Tools page to target/site-check/tools.png.
//
//   node scripts/docs-browser-check.mjs [SITE_DIR]    (default: $CARGO_TARGET_DIR/site or target/site)
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const target = process.env.CARGO_TARGET_DIR || join(repo, "target");
const site = resolve(process.argv[2] || join(target, "site"));
const shots = join(target, "site-check");
const chromiumPath = "/usr/bin/chromium";

function fail(message) {
  console.error(`docs-browser-check: FAIL: ${message}`);
  process.exit(1);
}

// Missing tools are a failure, never a skip: the check would otherwise pass having seen nothing.
if (!existsSync(join(site, "index.html"))) fail(`no built site in ${site} (run \`make docs\`)`);
if (!existsSync(chromiumPath)) fail(`${chromiumPath} is missing (Debian package chromium: scripts/system-deps.sh docs)`);
let chromium;
try {
  // Resolved from tests/docs-browser, where its pinned package.json installs it.
  ({ chromium } = createRequire(join(repo, "tests/docs-browser/package.json"))("playwright-core"));
} catch (error) {
  fail(`playwright-core is not installed in tests/docs-browser (npm ci there): ${error.message}`);
}

const types = {
  ".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript",
  ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png",
  ".ico": "image/x-icon", ".xml": "application/xml", ".woff2": "font/woff2", ".txt": "text/plain",
};

// The site's files as a static server would serve them: `/x/` is `/x/index.html`.
function fileOf(urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath.split("?")[0]);
  } catch {
    return null;
  }
  let file = resolve(site, "." + path);
  if (file !== site && !file.startsWith(site + sep)) return null;
  if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
  return existsSync(file) && statSync(file).isFile() ? file : null;
}

const server = createServer((req, res) => {
  const file = fileOf(req.url);
  if (!file) {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    return;
  }
  res.writeHead(200, { "content-type": types[extname(file)] || "application/octet-stream" });
  res.end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const origin = `http://127.0.0.1:${server.address().port}`;

// Every page of the site: each index.html under it, as its directory URL.
function pages(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return pages(path);
    return entry.name === "index.html" ? ["/" + relative(site, dir).split(sep).filter(Boolean).map((p) => p + "/").join("")] : [];
  });
}

const problems = [];
const browser = await chromium.launch({
  executablePath: chromiumPath,
  // Root on the build machines: Chromium's sandbox needs a user namespace it may not get.
  args: ["--no-sandbox"],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const scriptErrors = [];
  page.on("pageerror", (error) => scriptErrors.push(error.message));

  // Loads a page; returns its links and the ids of its elements.
  async function visit(path) {
    scriptErrors.length = 0;
    const response = await page.goto(origin + path, { waitUntil: "load" });
    if (!response || response.status() !== 200) {
      problems.push(`${path}: the page did not load (HTTP ${response && response.status()})`);
      return null;
    }
    const seen = await page.evaluate(() => ({
      ids: [...document.querySelectorAll("[id]")].map((e) => e.id),
      links: [...document.querySelectorAll("a[href]")].map((a) => ({ href: a.href, raw: a.getAttribute("href") })),
    }));
    for (const message of scriptErrors) problems.push(`${path}: script error: ${message}`);
    return { ids: new Set(seen.ids), links: seen.links };
  }

  const all = pages(site);
  if (!all.includes("/tools/")) problems.push("the site has no Tools page (/tools/)");
  const visited = new Map();
  for (const path of all) visited.set(path, await visit(path));

  let checked = 0;
  for (const [from, seen] of visited) {
    if (!seen) continue;
    for (const { href, raw } of seen.links) {
      const url = new URL(href);
      if (url.origin !== origin) continue; // another site: not ours to check offline
      checked++;
      const path = url.pathname.endsWith("/") || extname(url.pathname) ? url.pathname : url.pathname + "/";
      if (!fileOf(path)) {
        problems.push(`${from}: link "${raw}" goes to ${path}, which does not exist`);
        continue;
      }
      if (!url.hash || url.hash === "#") continue;
      if (!visited.has(path)) {
        if (extname(path) && extname(path) !== ".html") {
          problems.push(`${from}: link "${raw}" has an anchor on a file that is not a page`);
          continue;
        }
        visited.set(path, await visit(path));
      }
      const ids = visited.get(path)?.ids;
      const anchor = decodeURIComponent(url.hash.slice(1));
      if (ids && !ids.has(anchor)) problems.push(`${from}: link "${raw}": ${path} has no element with id "${anchor}"`);
    }
  }

  // The language tabs, on the Tools page.
  await page.goto(origin + "/tools/", { waitUntil: "load" });
  await page.evaluate(() => localStorage.clear());
  await page.reload({ waitUntil: "load" });
  const groups = page.locator(".tabbed-set");
  const groupCount = await groups.count();
  if (groupCount === 0) problems.push("/tools/: no language tabs");
  const goLabel = groups.first().locator(".tabbed-labels > label").filter({ hasText: /^Go$/ });
  if ((await goLabel.count()) !== 1) {
    problems.push("/tools/: the first tab group has no single \"Go\" label");
  } else {
    await goLabel.click();
    problems.push(...(await tabsShowing(page, "Go", "/tools/ after clicking Go")));
    // content.tabs.link keeps the choice: the next page opens on Go as well.
    await page.goto(origin + "/mcp-tools/", { waitUntil: "load" });
    problems.push(...(await tabsShowing(page, "Go", "/mcp-tools/ opened after choosing Go")));
    // On a page with several tab groups, a click in one switches all of them.
    const mcpGroups = await page.locator(".tabbed-set").count();
    if (mcpGroups < 2) problems.push(`/mcp-tools/: ${mcpGroups} tab group(s), the linked switch needs two or more`);
    const ruby = page.locator(".tabbed-labels > label").filter({ hasText: /^Ruby$/ });
    await ruby.last().click();
    problems.push(...(await tabsShowing(page, "Ruby", "/mcp-tools/ after clicking Ruby in its last tab group that has one")));
    await page.goto(origin + "/tools/", { waitUntil: "load" });
    // The Tools page now opens on Ruby: choose Go again for the screenshot.
    await goLabel.click();
  }
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, "tools.png"), fullPage: true });

  console.log(`docs-browser-check: ${visited.size} page(s) loaded, ${checked} internal link(s) checked, ` +
    `${groupCount} tab group(s) on the Tools page; screenshot ${join(shots, "tools.png")}`);
} finally {
  await browser.close();
  server.close();
}

// Every tab group of the page that has a LABEL tab shows that tab's panel, and only it.
async function tabsShowing(page, label, where) {
  const states = await page.evaluate((label) => [...document.querySelectorAll(".tabbed-set")].map((set) => {
    const labels = [...set.querySelectorAll(":scope > .tabbed-labels > label")].map((l) => l.textContent.trim());
    const inputs = [...set.querySelectorAll(":scope > input")];
    const blocks = [...set.querySelectorAll(":scope > .tabbed-content > .tabbed-block")];
    const visible = (e) => !!e && e.getClientRects().length > 0 && getComputedStyle(e).display !== "none";
    return {
      labels,
      index: labels.indexOf(label),
      checked: inputs.findIndex((i) => i.checked),
      visible: blocks.map(visible),
    };
  }), label);
  const found = [];
  let withLabel = 0;
  states.forEach((s, n) => {
    if (s.index < 0) return;
    withLabel++;
    if (s.checked !== s.index) found.push(`${where}: tab group ${n + 1} shows "${s.labels[s.checked]}", not "${label}"`);
    if (!s.visible[s.index]) found.push(`${where}: tab group ${n + 1}: the "${label}" panel is not visible`);
    const others = s.visible.filter((v, i) => v && i !== s.index).length;
    if (others) found.push(`${where}: tab group ${n + 1}: ${others} other panel(s) visible too`);
  });
  if (withLabel === 0) found.push(`${where}: no tab group has a "${label}" tab`);
  return found;
}

if (problems.length) {
  console.error(`docs-browser-check: ${problems.length} problem(s):`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
