// The shopper's story in a real browser (headless Chromium, driven by
// playwright-core): open the demo product page, tap Notify me, post a
// restock from the back office, open the notice's reserve link from the
// outbox, hold, land on checkout, buy. Screenshots go to target/browser/.
// The storefront and capture are two origins, as deployed: every widget
// call crosses origins under the capture Function URL's CORS from
// template.yaml.
//
//   cargo build -p restock-local && node tests/browser/story.mjs
//
// The same story on a Shopify theme runs in shopify.mjs, on a WooCommerce
// block theme in woocommerce.mjs.
//
// RESTOCK_LOCAL_BIN overrides the server binary; CHROMIUM the browser.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { shopifyStory } from "./shopify.mjs";
import { woocommerceStory } from "./woocommerce.mjs";
import { openAt, waiting } from "./storefront.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const bin = process.env.RESTOCK_LOCAL_BIN ?? path.join(root, "target/debug/restock-local");
const shots = path.join(root, "target/browser");
mkdirSync(shots, { recursive: true });

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(url, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up within ${ms} ms`);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
  console.log(`  ok  ${message}`);
}

const port = await freePort();
const capturePort = await freePort();
const base = `http://127.0.0.1:${port}`;
const capture = `http://127.0.0.1:${capturePort}`;
const work = mkdtempSync(path.join(tmpdir(), "restock-browser-"));
const server = spawn(bin, ["--port", String(port), "--capture-port", String(capturePort), "--outbox", path.join(work, "outbox.jsonl"), "--sweep-every", "1"], {
  stdio: ["ignore", "pipe", "inherit"],
});
let serverLog = "";
server.stdout.on("data", (d) => (serverLog += d));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

let failed = false;
try {
  await waitFor(`${base}/`, 15000);
  await waitFor(`${capture}/widget`, 15000);
  // A phone in Sydney: its clock goes with the sign-up, for quiet hours.
  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, timezoneId: "Australia/Sydney" });
  const joins = [];
  page.on("request", (r) => {
    if (r.method() === "POST" && r.url() === `${capture}/requests`) joins.push(r.postDataJSON());
  });
  // What reached capture's origin and came back readable (a call CORS
  // blocks fails instead), and what the browser complained of.
  const crossOrigin = [];
  const watch = (p) => {
    p.on("requestfinished", (r) => {
      if (r.url().startsWith(`${capture}/`)) crossOrigin.push(`${r.method()} ${new URL(r.url()).pathname}`);
    });
    p.on("console", (m) => {
      if (m.type() === "error") console.log(`  browser console: ${m.text()}`);
    });
  };
  watch(page);
  const email = "grace@example.com";

  console.log("shopper joins the queue");
  await page.goto(`${base}/products/CHAIR-WAL`);
  check((await page.locator(".tag").textContent()) === "Sold out", "the product is sold out");
  // Reached by their labels: the form is usable with a screen reader.
  await page.getByLabel("Email or mobile number").fill(email);
  await page.getByLabel("First name").fill("Grace");
  // Keyboard only: tick consent with Space, submit with Enter.
  await page.getByLabel(/Tell me once/).focus();
  await page.keyboard.press("Space");
  await page.getByRole("button", { name: "Notify me" }).focus();
  await page.keyboard.press("Enter");
  const status = page.getByRole("status");
  await status.filter({ hasText: "in line" }).waitFor({ timeout: 10000 });
  check((await status.textContent()).includes("number 1 in line"), "the widget shows the shopper's position");
  check(joins.length === 1 && joins[0].time_zone === "Australia/Sydney", `the widget sends the browser's time zone: ${JSON.stringify(joins)}`);
  check((await status.textContent()).includes("open it to confirm"), "and asks them to confirm from their inbox (double opt-in)");
  await page.screenshot({ path: path.join(shots, "1-joined.png"), fullPage: true });

  // A returning visit: the widget kept the manage token it was given.
  await page.reload();
  await page.getByRole("status").filter({ hasText: "in line" }).waitFor({ timeout: 10000 });
  check((await page.getByRole("status").textContent()).includes("number 1 in line"), "a returning visit shows the place again");
  check(
    crossOrigin.some((c) => c.startsWith("POST /requests")) && crossOrigin.some((c) => /^GET \/requests\/./.test(c)),
    `the widget joined and read the place on capture's own origin: ${crossOrigin.join(", ")}`,
  );

  console.log("a launch to come: the widget says when, on the shopper's clock");
  const launch = await browser.newPage({ viewport: { width: 390, height: 844 }, timezoneId: "Australia/Sydney", locale: "en-AU" });
  await launch.goto(`${base}/products/JACKET-WAX`);
  const coming = launch.getByRole("heading", { name: /^Coming / });
  await coming.waitFor({ timeout: 10000 });
  const { launch_at_ms: launchAt } = await (await fetch(`${capture}/items/JACKET-WAX`)).json();
  // The page is in English; the browser's clock is Sydney's.
  const sydney = await launch.evaluate(
    (ms) => new Intl.DateTimeFormat("en", { timeZone: "Australia/Sydney", dateStyle: "full", timeStyle: "short" }).format(new Date(ms)),
    launchAt,
  );
  check((await coming.textContent()).includes(sydney), `the launch on Sydney's clock (${sydney}): ${await coming.textContent()}`);
  await launch.close();

  console.log("the shopper confirms from the inbox (double opt-in)");
  let confirmLink = null;
  for (let i = 0; i < 50 && !confirmLink; i++) {
    await page.goto(`${base}/outbox`);
    const found = page.getByRole("row").filter({ hasText: email }).getByRole("link", { name: "Open confirmation link" });
    if ((await found.count()) > 0) confirmLink = found.first();
    else await new Promise((r) => setTimeout(r, 200));
  }
  check(confirmLink !== null, "a confirmation reaches the shopper, with its link");
  await confirmLink.click();
  check((await page.title()).startsWith("Confirm your place"), "the link opens a page, not an action (mail scanners open links too)");
  await page.getByRole("button", { name: "Yes, tell me when it's back" }).click();
  await page.getByRole("heading", { name: "You're on the list" }).waitFor();
  check((await page.locator("main").textContent()).includes("number 1 in line"), "confirmed, with the place kept");
  await page.screenshot({ path: path.join(shots, "1b-confirmed.png"), fullPage: true });
  await page.goto(`${base}/products/CHAIR-WAL`);

  console.log("someone else, in another browser, joins and leaves");
  const other = await browser.newPage({ viewport: { width: 390, height: 844 } });
  watch(other);
  const join = async (who, name) => {
    await other.getByLabel("Email or mobile number").fill(who);
    await other.getByLabel("First name").fill(name);
    await other.getByLabel(/Tell me once/).check();
    await other.getByRole("button", { name: "Notify me" }).click();
  };
  await other.goto(`${base}/products/CHAIR-WAL`);
  await join("hal@example.com", "Hal");
  await other.getByRole("status").filter({ hasText: "number 2 in line" }).waitFor({ timeout: 10000 });
  await other.getByRole("button", { name: "Leave the list" }).click();
  await other.getByRole("status").filter({ hasText: /won.t hear/ }).waitFor({ timeout: 10000 });
  check(
    (await other.getByRole("status").textContent()).match(/won.t hear/) !== null &&
      (await other.getByRole("button", { name: "Leave the list" }).count()) === 0,
    "the browser that joined can leave the list",
  );
  check(crossOrigin.some((c) => /^DELETE \/requests\/./.test(c)), "leaving is a cross-origin DELETE with the manage token");
  // Typing Grace's address there tells the place, and gives no way to act on it.
  await join(email, "Grace");
  await other.getByRole("status").filter({ hasText: "number 1 in line" }).waitFor({ timeout: 10000 });
  check((await other.getByRole("button", { name: "Leave the list" }).count()) === 0, "knowing Grace's address gives no way to remove her");
  await other.close();

  console.log("the shop restocks");
  await page.getByLabel("New stock level").fill("1");
  await page.getByRole("button", { name: "Post restock" }).click();
  await page.waitForURL(`${base}/products/CHAIR-WAL`);

  console.log("the notice arrives in the outbox");
  let link = null;
  for (let i = 0; i < 50 && !link; i++) {
    await page.goto(`${base}/outbox`);
    const found = page.getByRole("row").filter({ hasText: email }).getByRole("link", { name: "Open reserve link" });
    if ((await found.count()) > 0) link = found.first();
    else await new Promise((r) => setTimeout(r, 200));
  }
  check(link !== null, "one notice for the shopper, with a reserve link");
  await page.screenshot({ path: path.join(shots, "2-outbox.png"), fullPage: true });

  console.log("the shopper opens the link and holds a unit");
  await link.click();
  check((await page.title()).startsWith("Reserve your Walnut lounge chair"), "the reserve page names the product");
  await page.getByRole("button", { name: "Hold mine and go to checkout" }).click();
  await page.waitForURL(/\/checkout\?/);
  const held = await page.locator("main").textContent();
  check(held.includes("One Walnut lounge chair is held for you"), "checkout says what is held");
  check(held.includes("10m"), "and for how long");
  await page.screenshot({ path: path.join(shots, "3-checkout.png"), fullPage: true });

  console.log("the shopper buys");
  await page.getByRole("button", { name: "Complete purchase" }).click();
  await page.getByRole("heading", { name: "Order placed" }).waitFor();

  const stats = await (
    await fetch(`${base}/_admin/run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ command: "stats", skus: ["CHAIR-WAL"] }),
    })
  ).json();
  const figures = stats.json.skus[0].stats;
  check(figures.bought === 1 && figures.held === 0 && figures.offered === 0, `the order webhook ended the hold: ${JSON.stringify(figures)}`);

  console.log("a shopper on a German page, and one on an Arabic page");
  const german = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: "en-GB" });
  await german.goto(`${base}/products/LAMP-BRASS?lang=de`);
  // The page declares German; the browser says English: the page wins.
  await german.getByRole("heading", { name: /Ausverkauft/ }).waitFor({ timeout: 10000 });
  check((await german.locator(".restock").getAttribute("lang")) === "de", "the widget takes the page's language");
  await german.getByLabel("E-Mail oder Handynummer").fill("greta@example.com");
  await german.getByLabel("Vorname").fill("Greta");
  // Left empty on purpose first: the widget's own check speaks German too.
  await german.getByRole("button", { name: "Benachrichtige mich" }).click();
  await german.getByRole("status").filter({ hasText: "Häkchen" }).waitFor({ timeout: 10000 });
  check(true, "the widget's own checks speak German");
  await german.getByLabel(/Sag mir einmal Bescheid, wenn Brass desk lamp wieder da ist/).check();
  await german.getByRole("button", { name: "Benachrichtige mich" }).click();
  const germanStatus = german.getByRole("status").filter({ hasText: "Warteschlange" });
  await germanStatus.waitFor({ timeout: 10000 });
  check((await germanStatus.textContent()).includes("Du bist Nummer 1 in der Warteschlange"), "the place in line, in German");
  check((await german.getByRole("heading").filter({ hasText: "Schau in dein Postfach" }).count()) === 1, "and the ask to confirm");
  check((await german.getByRole("button", { name: "Warteliste verlassen" }).count()) === 1, "with a German way to leave");
  check(await german.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), "the German page fits the phone's width");
  await german.screenshot({ path: path.join(shots, "4-german.png"), fullPage: true });
  let germanMail = null;
  for (let i = 0; i < 50 && !germanMail; i++) {
    await german.goto(`${base}/outbox`);
    const row = german.getByRole("row").filter({ hasText: "greta@example.com" });
    if ((await row.count()) > 0) germanMail = await row.first().textContent();
    else await new Promise((r) => setTimeout(r, 200));
  }
  check(germanMail !== null && germanMail.includes("Bestätigen:"), `the confirmation is German: ${germanMail}`);
  await german.close();

  const arabic = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await arabic.goto(`${base}/products/LAMP-BRASS?lang=ar`);
  await arabic.getByRole("button", { name: "أخبرني" }).waitFor({ timeout: 10000 });
  check((await arabic.locator(".restock").getAttribute("dir")) === "rtl", "an Arabic page's widget runs right to left");
  const fits = async (p) => p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  check(await fits(arabic), "and fits the phone's width (nothing pushed off the edge)");
  await arabic.screenshot({ path: path.join(shots, "5-arabic.png"), fullPage: true });
  await arabic.close();

  console.log("a product in sizes: the widget follows the size picker");
  const sized = await browser.newPage({ viewport: { width: 390, height: 844 } });
  // The back office restocks size M; S and L stay sold out.
  await sized.goto(`${base}/sized/linen-tee`);
  await sized.locator("#sku").selectOption("TEE-M");
  await sized.locator("#level").fill("4");
  await sized.getByRole("button", { name: "Post restock" }).click();
  await sized.waitForURL(`${base}/sized/linen-tee`);
  const widget = sized.locator("[data-restock-endpoint]");
  await sized.getByLabel("Size", { exact: true }).selectOption({ label: "M" });
  await sized.waitForTimeout(300);
  check(await widget.isHidden(), "an in-stock size shows no notify-me form");
  await sized.getByLabel("Size", { exact: true }).selectOption({ label: "S — sold out" });
  await sized.getByRole("button", { name: "Notify me" }).waitFor({ timeout: 10000 });
  check(await widget.isVisible(), "a sold-out size shows the form");
  await sized.getByLabel("Email or mobile number").fill("sol@example.com");
  await sized.getByLabel("First name").fill("Sol");
  await sized.getByLabel(/Tell me once/).check();
  await sized.getByRole("button", { name: "Notify me" }).click();
  await sized.getByRole("status").filter({ hasText: "in line" }).waitFor({ timeout: 10000 });
  const joined = await (
    await fetch(`${base}/_admin/run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ command: "stats", skus: ["TEE-S", "TEE-M"] }),
    })
  ).json();
  const [teeS, teeM] = joined.json.skus.map((s) => s.stats);
  check(teeS.waiting + teeS.unconfirmed === 1 && teeM.waiting + teeM.unconfirmed === 0, `signed up for size S, not M: ${JSON.stringify(joined.json.skus)}`);
  await sized.screenshot({ path: path.join(shots, "8-sized-signed-up.png"), fullPage: true });
  await sized.getByLabel("Size", { exact: true }).selectOption({ label: "M" });
  await sized.waitForTimeout(300);
  check(await widget.isHidden(), "switching to an in-stock size hides the form");
  check(await fits(sized), "the sized page fits the phone's width");
  // A Shopify theme says the size in the address (?variant=), changed
  // with history.replaceState, which fires no event.
  await sized.goto(`${base}/sized/linen-tee?variant=9003`);
  await sized.getByRole("button", { name: "Notify me" }).waitFor({ timeout: 10000 });
  check(await widget.isVisible(), "?variant= naming a sold-out size shows the form");
  await sized.evaluate(() => history.replaceState(null, "", "?variant=9002"));
  await widget.waitFor({ state: "hidden", timeout: 5000 });
  check(await widget.isHidden(), "and the address moving to an in-stock size hides it");
  // A malformed address (a link cut short, `?variant=%`) breaks nothing:
  // the widget takes the page's own choice.
  const thrown = [];
  sized.on("pageerror", (e) => thrown.push(e.message));
  await sized.goto(`${base}/sized/linen-tee?variant=%`);
  await sized.waitForTimeout(500);
  check(thrown.length === 0, `?variant=% throws nothing: ${thrown.join("; ")}`);
  await sized.close();

  console.log("a shopper asks to be told by email and text, then leaves both");
  const pair = await openAt(
    browser,
    base,
    `${base}/products/SNEAKER-DROP`,
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"></head><body>
<div data-restock-sku="SNEAKER-DROP" data-restock-product="Limited runner" data-restock-endpoint="${capture}" data-restock-channels="email+sms"></div>
<script src="${base}/restock-widget.js"></script></body></html>`,
  );
  const sneaker = async () => {
    const s = await waiting(base, "SNEAKER-DROP");
    return s.waiting + s.unconfirmed;
  };
  const before = await sneaker();
  await pair.getByLabel("Email", { exact: true }).fill("ada@example.com");
  await pair.getByLabel("Mobile number").fill("+44 7911 123456");
  await pair.getByLabel("First name").fill("Ada");
  await pair.getByLabel(/Tell me once/).check();
  check(await fits(pair), "the two-field form fits the phone's width");
  await pair.screenshot({ path: path.join(shots, "9-email-and-text.png"), fullPage: true });
  await pair.getByRole("button", { name: "Notify me" }).click();
  const leave = pair.getByRole("button", { name: "Leave the list" });
  await leave.waitFor({ timeout: 10000 });
  check((await sneaker()) === before + 2, "one sign-up, a request on each channel");
  await leave.click();
  await leave.waitFor({ state: "detached", timeout: 10000 });
  for (let i = 0; i < 20 && (await sneaker()) !== before; i++) await pair.waitForTimeout(100);
  check((await sneaker()) === before, "leaving leaves both channels");
  await pair.close();

  await shopifyStory({ browser, root, base, capture, check, fits, shots });
  await woocommerceStory({ browser, root, base, capture, check, fits, shots });

  console.log("the team looks at the dashboard, on a desktop and on a phone");
  const inside = async (p, locator) => {
    const box = await locator.boundingBox();
    const width = await p.evaluate(() => window.innerWidth);
    return box !== null && box.x >= 0 && box.x + box.width <= width + 0.5;
  };
  for (const [size, viewport] of [["desktop", { width: 1280, height: 800 }], ["phone", { width: 390, height: 844 }]]) {
    const team = await browser.newPage({ viewport });
    await team.goto(`${base}/admin`);
    const chair = team.getByRole("row").filter({ has: team.getByRole("link", { name: "CHAIR-WAL" }) });
    const cells = await chair.getByRole("cell").allTextContents();
    // Item, waiting, to confirm, offered, held, bought, lapsed, claim rate, conversion, revenue, sold out for.
    check(cells[5] === "1" && cells[7] === "100%" && cells[8] === "100%", `the chair's purchase shows: ${cells}`);
    check(await fits(team), `the overview fits the ${size}'s width (the table scrolls in its own box)`);
    for (const name of ["Reconcile every item", "Export requests (CSV)", "Forget"]) {
      check(await inside(team, team.getByRole("button", { name, exact: true })), `"${name}" is on the ${size}'s screen`);
    }
    await team.screenshot({ path: path.join(shots, `6-dashboard-${size}.png`), fullPage: true });
    await team.getByRole("link", { name: "CHAIR-WAL" }).click();
    await team.getByRole("heading", { name: "CHAIR-WAL" }).waitFor();
    const charts = team.getByRole("img");
    check((await charts.count()) === 3, "three charts: sign-ups, notices, purchases");
    check((await team.locator("svg rect").count()) === 90, "a bar a day for 30 days in each");
    check((await team.getByRole("figure").filter({ hasText: "Purchases — 1 in 30 days" }).count()) === 1, "the purchase is counted");
    check((await charts.nth(2).locator("rect").last().getAttribute("height")) !== "0", "on today's bar, the last");
    for (let i = 0; i < 3; i++) check(await inside(team, charts.nth(i)), `chart ${i + 1} fits the ${size}`);
    const restock = await team.getByRole("row").filter({ hasText: "#1" }).getByRole("cell").allTextContents();
    check(restock[2] === "1" && restock[3] === "1" && restock[4] === "1" && restock[8] === "100%", `restock #1: one told, who held and bought: ${restock}`);
    check(await fits(team), `the item's page fits the ${size}'s width`);
    await team.screenshot({ path: path.join(shots, `7-item-${size}.png`), fullPage: true });
    await team.getByRole("button", { name: "Reconcile", exact: true }).click();
    await team.getByRole("heading", { name: "Done" }).waitFor();
    check((await team.locator("main").textContent()).includes("counters match"), "reconcile runs from the item's page");
    await team.close();
  }

  console.log(`browser story passed; screenshots in ${shots}`);
} catch (e) {
  failed = true;
  console.error(`browser story failed: ${e.stack ?? e}`);
  console.error(`server output:\n${serverLog}`);
} finally {
  await browser.close();
  server.kill();
}
process.exit(failed ? 1 : 0);
