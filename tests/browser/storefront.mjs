// What the platform stories share: a shop's product page opened at the
// storefront's origin, and what an item's queue holds.

// Opens `html` as the page at `address` on the storefront's origin `base`.
// The page comes from the loopback server first (a page answered by
// playwright instead counts as public, which Chromium's local network rules
// keep from calling loopback): an answer with no page policy of its own
// (the outbox's JSON), the shop's page written in, then its address set.
export async function openAt(browser, base, address, html) {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await page.goto(`${base}/outbox.json`);
  await page.setContent(html, { waitUntil: "load" });
  await page.evaluate((to) => history.replaceState(null, "", to), address);
  return page;
}

// The SKU's stats from the local server (waiting, unconfirmed, …).
export async function waiting(base, sku) {
  const answer = await fetch(`${base}/_admin/run`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ command: "stats", skus: [sku] }),
  });
  return (await answer.json()).json.skus[0].stats;
}
