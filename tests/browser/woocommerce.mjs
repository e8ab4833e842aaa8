// The WordPress plugin on a block theme's product page: the plugin's
// template (examples/woocommerce/restock.php) with the CaptureUrl filled in,
// run by PHP through tests/woocommerce/harness.php, renders the "Add to
// Cart + Options" block with the form after it; the page around it is a
// block theme's single-product template. The block keeps the chosen
// variation in its hidden `variation_id` field, which WooCommerce's
// Interactivity API store sets with no event (a stand-in for that store
// does the same here); no jQuery, no `found_variation`.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openAt, waiting } from "./storefront.mjs";

// The block as the plugin leaves it, for a tee in S, M, L (M in stock).
function renderedBlock(root, capture) {
  const template = readFileSync(path.join(root, "examples/woocommerce/restock.php"), "utf8");
  const plugin = path.join(mkdtempSync(path.join(tmpdir(), "restock-plugin-")), "restock.php");
  writeFileSync(plugin, template.replace("RESTOCK_CAPTURE_URL", capture));
  return execFileSync("php", [path.join(root, "tests/woocommerce/harness.php"), "page", plugin], { encoding: "utf8" });
}

function productPage(root, base, capture) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Linen tee – Loom &amp; Last</title><style>body{font-family:sans-serif;margin:0}.wp-site-blocks{padding:1rem}label{display:inline-block;margin-right:1rem}</style></head>
<body class="wp-theme-twentytwentyfive single-product woocommerce">
<div class="wp-site-blocks"><main class="wp-block-group">
<div class="wp-block-columns alignwide is-layout-flex"><div class="wp-block-column">
<h1 class="wp-block-post-title">Linen tee</h1>
<div class="wp-block-woocommerce-product-price"><span class="woocommerce-Price-amount amount">£45.00</span></div>
${renderedBlock(root, capture)}
</div></div></main></div>
<script>
  // WooCommerce's product-data store: the variation the chosen attributes
  // name, bound to the block's hidden field.
  var variations = { S: "9001", M: "9002", L: "9003" };
  document.querySelector(".wc-block-add-to-cart-with-options").addEventListener("change", function (e) {
    if (e.target.name !== "attribute_size") return;
    document.querySelector('input[name="variation_id"]').value = variations[e.target.value];
  });
</script>
<script src="${base}/restock-widget.js"></script>
</body></html>`;
}

// The shopper's story on the block theme's product page, at phone width.
export async function woocommerceStory({ browser, root, base, capture, check, fits, shots }) {
  console.log("a WooCommerce shop on a block theme: the form after the Add to Cart + Options block");
  const before = await waiting(base, "TEE-S");
  const page = await openAt(browser, base, `${base}/product/linen-tee/`, productPage(root, base, capture));
  const widget = page.locator("[data-restock-endpoint]");
  await page.waitForTimeout(500);
  check(await widget.isHidden(), "no size chosen yet: no form");
  check(await page.evaluate(() => !document.querySelector("[data-restock-endpoint]").closest("form")), "the form is outside the block's own form");
  await page.getByLabel("S", { exact: true }).check();
  await page.getByRole("button", { name: "Notify me" }).waitFor({ timeout: 10000 });
  check(await widget.isVisible(), "choosing a sold-out size shows the form");
  await page.getByLabel("Email or mobile number").fill("wren@example.com");
  await page.getByLabel("First name").fill("Wren");
  await page.getByLabel(/Tell me once/).check();
  await page.getByRole("button", { name: "Notify me" }).click();
  await page.getByRole("status").filter({ hasText: "in line" }).waitFor({ timeout: 10000 });
  const after = await waiting(base, "TEE-S");
  check(after.waiting + after.unconfirmed === before.waiting + before.unconfirmed + 1, `signed up for the size chosen (TEE-S): ${JSON.stringify(after)}`);
  await page.screenshot({ path: path.join(shots, "10-woocommerce-block-theme.png"), fullPage: true });
  await page.getByLabel("M", { exact: true }).check();
  await widget.waitFor({ state: "hidden", timeout: 5000 });
  check(await widget.isHidden(), "choosing the size in stock hides it");
  check(await fits(page), "the page fits the phone's width");
  await page.close();
}
