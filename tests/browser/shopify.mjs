// The Shopify app's theme app extension in the browser, rendered as
// Shopify renders it: examples/shopify/extensions/restock-notify/blocks/
// through LiquidJS, with the product, variant and block objects shaped as
// Shopify's Liquid reference documents them, the block's settings from its
// own {% schema %} (the CaptureUrl as `restock connect shopify --app` fills
// it in), and its script loaded as Shopify loads a schema's `javascript`.
// The page around it picks a variant as Online Store 2.0 themes do: option
// inputs outside the product form, which set the form's hidden `id` field
// and the address's ?variant= with history.replaceState (no event). Served
// at the storefront's origin, so capture is reached cross-origin, as
// deployed.

import { readFileSync } from "node:fs";
import path from "node:path";
import { Liquid } from "liquidjs";
import { openAt, waiting } from "./storefront.mjs";

const EXTENSION = "examples/shopify/extensions/restock-notify";

// A linen tee in three sizes (the local server's TEE-S, TEE-M, TEE-L): M in
// stock, S and L sold out. Each variant as `product.variants | json` gives it.
function product() {
  const variant = (id, size, sku, available) => ({
    id,
    title: size,
    option1: size,
    option2: null,
    option3: null,
    sku,
    requires_shipping: true,
    taxable: true,
    featured_image: null,
    available,
    name: `Linen tee - ${size}`,
    public_title: size,
    options: [size],
    price: 4500,
    weight: 180,
    compare_at_price: null,
    inventory_management: "shopify",
    barcode: "",
    requires_selling_plan: false,
    selling_plan_allocations: [],
  });
  const variants = [variant(9001, "S", "TEE-S", false), variant(9002, "M", "TEE-M", true), variant(9003, "L", "TEE-L", false)];
  return {
    id: 900,
    title: "Linen tee",
    handle: "linen-tee",
    available: true,
    has_only_default_variant: false,
    options: ["Size"],
    variants,
    selected_or_first_available_variant: variants.find((v) => v.available) ?? variants[0],
  };
}

// One block of the extension, as Shopify renders it on a product page: its
// schema's setting defaults, `capture` as the CaptureUrl.
async function renderBlock(root, name, capture) {
  const liquid = new Liquid({ strictFilters: true });
  // {% schema %} is read by Shopify and renders nothing.
  liquid.registerTag("schema", {
    parse(token, remain) {
      for (let t = remain.shift(); t; t = remain.shift()) if (t.name === "endschema") return;
      throw new Error(`${name}: {% schema %} is not closed`);
    },
    *render() {
      return "";
    },
  });
  const source = readFileSync(path.join(root, EXTENSION, "blocks", `${name}.liquid`), "utf8");
  const schema = JSON.parse(source.slice(source.indexOf("{% schema %}") + 12, source.indexOf("{% endschema %}")));
  const settings = Object.fromEntries(schema.settings.map((s) => [s.id, s.default]));
  settings.capture_url = capture;
  const html = await liquid.parseAndRender(source, {
    product: product(),
    block: { id: `AbC${name}`, type: `shopify://apps/restock/blocks/${name}`, settings, shopify_attributes: "" },
  });
  return { html, script: schema.javascript };
}

// A product page with the block in the product section (`block`) and the
// embed at the end of the body (`embed`), either or both.
async function productPage(root, base, capture, { block, embed }) {
  const p = product();
  const chosen = p.selected_or_first_available_variant;
  const inSection = block ? await renderBlock(root, "notify", capture) : { html: "" };
  const atEnd = embed ? await renderBlock(root, "embed", capture) : { html: "" };
  const sizes = p.variants
    .map(
      (v) =>
        `<label><input type="radio" name="Size" value="${v.id}"${v.id === chosen.id ? " checked" : ""}> ${v.title}${v.available ? "" : " — sold out"}</label>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${p.title}</title><style>body{font-family:sans-serif;margin:0;padding:1rem}label{display:block}</style></head>
<body><main>
<section class="product"><h1>${p.title}</h1><p>£45.00</p>
<fieldset class="variant-picker"><legend>Size</legend>
${sizes}
</fieldset>
<form action="/cart/add" method="post" class="product-form"><input type="hidden" name="id" value="${chosen.id}"><button type="submit" name="add">Add to cart</button></form>
${inSection.html}
</section></main>
${atEnd.html}
<script>
  // The theme's picker: the form's id field and the address follow it.
  document.querySelector(".variant-picker").addEventListener("change", function (e) {
    document.querySelector('form[action="/cart/add"] [name="id"]').value = e.target.value;
    history.replaceState(null, "", "?variant=" + e.target.value);
  });
</script>
<script src="${base}/${(inSection.script ?? atEnd.script) || "restock-widget.js"}" defer></script>
</body></html>`;
}

// The shopper's story on the rendered app block and app embed, at phone width.
export async function shopifyStory({ browser, root, base, capture, check, fits, shots }) {
  const address = `${base}/shopify/products/linen-tee`;
  const open = async (parts) => openAt(browser, base, address, await productPage(root, base, capture, parts));
  const pick = (page, size) => page.getByLabel(size, { exact: true }).check();

  console.log("a Shopify shop: the app block on a product page in sizes");
  const page = await open({ block: true });
  const widget = page.locator("[data-restock-endpoint]");
  await page.waitForTimeout(500);
  check(await widget.isHidden(), "the in-stock size the page opens on shows no form");
  await pick(page, "L — sold out");
  await page.getByRole("button", { name: "Notify me" }).waitFor({ timeout: 10000 });
  check(await widget.isVisible(), "picking a sold-out size shows the app block's form");
  await page.getByLabel("Email or mobile number").fill("ada@example.com");
  await page.getByLabel("First name").fill("Ada");
  await page.getByLabel(/Tell me once/).check();
  await page.getByRole("button", { name: "Notify me" }).click();
  await page.getByRole("status").filter({ hasText: "in line" }).waitFor({ timeout: 10000 });
  const teeL = await waiting(base, "TEE-L");
  check(teeL.waiting + teeL.unconfirmed === 1, `signed up for the variant picked (TEE-L): ${JSON.stringify(teeL)}`);
  await page.screenshot({ path: path.join(shots, "9-shopify-app-block.png"), fullPage: true });
  await pick(page, "M");
  await widget.waitFor({ state: "hidden", timeout: 5000 });
  check(await widget.isHidden(), "switching to the size in stock hides it");
  check(await fits(page), "the page fits the phone's width");
  await page.close();

  console.log("a Shopify shop: the app embed, placed after the product form");
  const embedded = await open({ embed: true });
  const placed = await embedded.evaluate(() => {
    const form = document.querySelector('form[action*="/cart/add"]');
    return !!form.nextElementSibling && form.nextElementSibling.hasAttribute("data-restock-after");
  });
  check(placed, "the embed's form sits right after the product form");
  await pick(embedded, "S — sold out");
  await embedded.getByRole("button", { name: "Notify me" }).waitFor({ timeout: 10000 });
  check(await fits(embedded), "and fits the phone's width");
  await embedded.close();

  const both = await open({ block: true, embed: true });
  await pick(both, "S — sold out");
  await both.getByRole("button", { name: "Notify me" }).waitFor({ timeout: 10000 });
  const forms = await both.getByRole("button", { name: "Notify me" }).count();
  const embeds = await both.locator("[data-restock-after]").count();
  check(forms === 1 && embeds === 0, `with the block and the embed both on, one form shows, the block's (${forms} forms, ${embeds} embeds)`);
  await both.close();
}
