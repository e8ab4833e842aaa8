/*! restock notify-me widget. No dependencies. Paste into a product template:
 *
 *   <div data-restock-sku="CHAIR-WAL" data-restock-endpoint="https://<CaptureUrl>"></div>
 *   <script src="https://<where you host it>/restock-widget.js" defer></script>
 *
 * Optional attributes: data-restock-channels="email sms" (either, the
 * default; or just one; or "email+sms": an address and a number, told on
 * both), data-restock-product="Walnut lounge chair" (used in messages).
 *
 * A product with variants (sizes, colours): instead of data-restock-sku,
 * give the variants, as JSON in data-restock-variants or in a child
 * <script type="application/json">: [{"id", "sku", "available"}, …]
 * (Shopify's `product.variants | json`; WooCommerce's variations with
 * `variation_id` and `is_in_stock` work as they are). The form shows only
 * while the selected variant is sold out, and signs up for that variant.
 * It follows the selection: the `?variant=` in the address (Shopify
 * themes), a change of the product form's `id` field, WooCommerce's
 * `found_variation` and `reset_data` events (classic themes) and the
 * "Add to Cart + Options" block's `variation_id` field (block themes).
 * With data-restock-after="<CSS selector>" (Shopify's app embed) it moves
 * itself after the first element the selector matches, unless the page
 * has a placed form of its own.
 *
 * Its words come from the shop (GET <endpoint>/widget?language=<the page's
 * language>), in the closest language the shop offers, with the shop's own
 * wording; the English below is used only when they cannot be fetched.
 */
(function () {
  "use strict";

  var STYLE =
    ".restock{position:relative;font:inherit;max-width:26rem;border:1px solid #d6d6d0;border-radius:.5rem;padding:1rem;background:#fff}" +
    ".restock h2{font-size:1.05rem;margin:0 0 .5rem}" +
    ".restock label{display:block;font-weight:600;margin:.6rem 0 .25rem}" +
    ".restock input[type=email],.restock input[type=tel],.restock input[type=text]{width:100%;box-sizing:border-box;padding:.7rem;font:inherit;border:1px solid #8a8a85;border-radius:.35rem}" +
    ".restock .restock-consent{display:flex;gap:.5rem;align-items:flex-start;font-weight:400;margin:.75rem 0}" +
    ".restock button{width:100%;padding:.8rem;font:inherit;font-weight:600;color:#fff;background:#1a1a1a;border:0;border-radius:.35rem;cursor:pointer}" +
    ".restock button[disabled]{opacity:.6;cursor:progress}" +
    ".restock button.restock-secondary{background:#fff;color:#1a1a1a;border:2px solid #1a1a1a;margin-top:.5rem}" +
    ".restock :focus-visible{outline:3px solid #f2b705;outline-offset:2px}" +
    // Hidden in place, not pushed off to one side: an offset past the left
    // edge widens a right-to-left page.
    ".restock .restock-hp{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}" +
    ".restock .restock-error{color:#a4000f}" +
    ".restock .restock-status{margin:.75rem 0 0;min-height:1.5em}";

  var uid = 0;

  // The words when the shop's cannot be fetched: English as restock ships it.
  var ENGLISH = {
    heading: "Sold out \u2014 get told when it\u2019s back",
    "contact-both": "Email or mobile number",
    "contact-email": "Email",
    "contact-sms": "Mobile number",
    name: "First name",
    consent: "Tell me once when {product} is back. I can opt out any time.",
    submit: "Notify me",
    "enter-contact": "Please enter your email address or mobile number.",
    tick: "Please tick the box so we may tell you.",
    "enter-name": "Please enter your first name, so the message can greet you.",
    adding: "Adding you to the list\u2026",
    retrying: "Lots of people are signing up right now \u2014 trying again\u2026",
    position: "You\u2019re number {position} in line.",
    check: "We\u2019ve sent you a link: open it to confirm, and we\u2019ll tell you once when {product} is back.",
    "told-once": "We\u2019ll tell you once when {product} is back, with a link that holds one for you.",
    left: "You won\u2019t hear about {product}. You can join again any time.",
    "from-inbox": "Manage your place from your inbox: the link in our email shows it, or lets you leave the list.",
    "try-again": "That didn\u2019t work \u2014 please try again.",
    unreachable: "We couldn\u2019t reach the shop. Check your connection and try again.",
    "went-wrong": "Something went wrong on our side. Please try again in a minute.",
    coming: "Coming {when} \u2014 get told when it\u2019s out",
    "check-title": "Check your inbox",
    "on-list-title": "You\u2019re on the list",
    leave: "Leave the list",
    "left-title": "You\u2019ve left the list",
  };

  // The page's language (<html lang>, else the browser's), sent only if it
  // looks like a BCP 47 tag: the shopper is told in the closest one the shop offers.
  function pageLanguage() {
    var tag = (document.documentElement.getAttribute("lang") || navigator.language || "").trim();
    return tag.length <= 35 && /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$/.test(tag) ? tag : undefined;
  }

  // The shopper's time zone as the browser knows it (a tz database name),
  // so no text reaches them in their quiet hours.
  function timeZone() {
    try {
      return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
    } catch (e) {
      return undefined;
    }
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      node.setAttribute(k, attrs[k]);
    });
    if (text) node.textContent = text;
    return node;
  }

  function storageKey(sku) {
    return "restock:" + sku;
  }

  // The manage token ("{sku}~{request}.{secret}") the shop gave this browser
  // when it joined: the only thing that reads or leaves the request.
  function remember(sku, token) {
    try {
      if (token) window.localStorage.setItem(storageKey(sku), token);
      else window.localStorage.removeItem(storageKey(sku));
    } catch (e) {
      /* private mode: the widget still works, it just forgets */
    }
  }

  function recall(sku) {
    try {
      return window.localStorage.getItem(storageKey(sku));
    } catch (e) {
      return null;
    }
  }

  function requestOf(token) {
    var rest = String(token).split("~")[1] || "";
    return rest.split(".")[0];
  }

  // The shop's words for this page's language, once per endpoint; English
  // if they do not arrive within three seconds.
  var fetched = {};
  function loadWords(endpoint, done) {
    var key = endpoint + "|" + (pageLanguage() || "");
    if (fetched[key]) return fetched[key].push(done);
    var waiting = (fetched[key] = [done]);
    var settled = false;
    function settle(answer) {
      if (settled) return;
      settled = true;
      fetched[key] = { push: function (f) { f(answer); } };
      waiting.forEach(function (f) { f(answer); });
    }
    var lang = pageLanguage();
    getJson(endpoint + "/widget" + (lang ? "?language=" + encodeURIComponent(lang) : ""), function (body) {
      settle(body && body.words ? body : { words: {} });
    });
  }

  // A JSON answer from capture, or null (an error, or nothing within three
  // seconds).
  function getJson(url, done) {
    var xhr = new XMLHttpRequest();
    xhr.open("GET", url);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.timeout = 3000;
    xhr.onload = function () {
      var body = null;
      try {
        body = xhr.status === 200 ? JSON.parse(xhr.responseText) : null;
      } catch (e) {
        body = null;
      }
      done(body);
    };
    xhr.onerror = xhr.ontimeout = function () {
      done(null);
    };
    xhr.send(null);
  }

  // The variants a root names, as [{id, sku, available}], or null.
  function variantsOf(root) {
    var text = root.getAttribute("data-restock-variants");
    var script = root.querySelector('script[type="application/json"]');
    if (!text && script) text = script.textContent;
    if (!text) return null;
    var list;
    try {
      list = JSON.parse(text);
    } catch (e) {
      return null;
    }
    if (!Array.isArray(list)) return null;
    return list.map(function (v) {
      return {
        id: String(v.id != null ? v.id : v.variation_id),
        sku: v.sku ? String(v.sku) : "",
        available: v.available != null ? !!v.available : !!v.is_in_stock,
      };
    });
  }

  // (URLSearchParams leaves a malformed escape such as `?variant=%` as it
  // is, where decodeURIComponent throws.)
  function queryParam(name) {
    return new URLSearchParams(window.location.search).get(name);
  }

  // Where WooCommerce's "Add to Cart + Options" block keeps its variation.
  var BLOCK_VARIATION = 'form.wc-block-add-to-cart-with-options input[name="variation_id"]';

  // The product form's selected variant: Shopify themes keep it in an
  // `id` field of the form that adds to the cart.
  function formVariant() {
    var field = document.querySelector('form[action*="/cart/add"] [name="id"]');
    return field ? field.value : null;
  }

  // Calls select(variant id, or null for none) whenever the shopper picks
  // another variant, however the page says so.
  function follow(select) {
    document.addEventListener("change", function (e) {
      var t = e.target;
      if (t && t.name === "id" && t.closest && t.closest('form[action*="/cart/add"]')) select(t.value);
    });
    var last = window.location.search;
    function fromAddress() {
      if (window.location.search === last) return;
      last = window.location.search;
      var id = queryParam("variant");
      if (id) select(id);
    }
    // WooCommerce's "Add to Cart + Options" block (block themes) keeps the
    // chosen variation in its hidden variation_id field, set by its store
    // with no event.
    var field = document.querySelector(BLOCK_VARIATION);
    var fromBlock = field ? field.value : null;
    function fromForm() {
      var now = document.querySelector(BLOCK_VARIATION);
      if (!now || now.value === fromBlock) return;
      fromBlock = now.value;
      select(fromBlock && fromBlock !== "0" ? fromBlock : null);
    }
    window.addEventListener("popstate", fromAddress);
    // Themes change the address with history.replaceState, which says nothing.
    window.setInterval(function () {
      fromAddress();
      fromForm();
    }, 400);
    var jq = window.jQuery;
    if (jq) {
      jq(document).on("found_variation", "form.variations_form", function (e, variation) {
        select(variation && variation.variation_id);
      });
      jq(document).on("reset_data", "form.variations_form", function () {
        select(null);
      });
    }
  }

  function mount(root) {
    var endpoint = (root.getAttribute("data-restock-endpoint") || "").replace(/\/+$/, "");
    var variants = variantsOf(root);
    if (!variants) {
      loadWords(endpoint, function (answer) {
        build(root, endpoint, answer);
      });
      return;
    }
    root.hidden = true;
    loadWords(endpoint, function (answer) {
      var shown = null;
      function select(id) {
        var chosen = null;
        for (var i = 0; i < variants.length; i++) if (variants[i].id === String(id)) chosen = variants[i];
        if (!chosen || chosen.available || !chosen.sku) {
          root.hidden = true;
          shown = null;
          return;
        }
        root.hidden = false;
        if (shown === chosen.id) return;
        shown = chosen.id;
        root.setAttribute("data-restock-sku", chosen.sku);
        build(root, endpoint, answer);
      }
      follow(select);
      // On a block theme's product page, what its block has chosen (none yet: no form).
      var block = document.querySelector(BLOCK_VARIATION);
      if (block) select(block.value && block.value !== "0" ? block.value : null);
      else select(queryParam("variant") || formVariant() || root.getAttribute("data-restock-variant") || variants[0].id);
    });
  }

  function build(root, endpoint, answer) {
    var sku = root.getAttribute("data-restock-sku");
    var product = root.getAttribute("data-restock-product") || "this item";
    var channels = (root.getAttribute("data-restock-channels") || "email sms").split(/\s+/);
    // A word by name, with {product} and {position} filled in.
    function w(name, position) {
      var text = answer.words[name] || ENGLISH[name];
      return text.split("{product}").join(product).split("{position}").join(String(position));
    }
    var n = ++uid;
    root.classList.add("restock");
    root.textContent = "";
    if (answer.language) {
      root.setAttribute("lang", answer.language);
      root.setAttribute("dir", answer.dir || "ltr");
    }

    var heading = el("h2", { id: "restock-h-" + n }, w("heading"));
    // A launch still to come: say when, on the shopper's own clock and in
    // the page's language.
    if (sku) {
      // What capture says of the item: its launch, if one is to come.
      getJson(endpoint + "/items/" + encodeURIComponent(sku), function (item) {
        if (!item || !item.launch_at_ms) return;
        var at = new Date(item.launch_at_ms);
        var when;
        try {
          when = new Intl.DateTimeFormat(answer.language || undefined, { dateStyle: "full", timeStyle: "short" }).format(at);
        } catch (e) {
          when = at.toString();
        }
        heading.textContent = w("coming").split("{when}").join(when);
      });
    }
    var form = el("form", { novalidate: "", "aria-labelledby": "restock-h-" + n });
    // Told on both channels: an address field and a number field.
    var both = channels.indexOf("email+sms") >= 0;
    var wantsSms = !both && channels.indexOf("sms") >= 0;
    var wantsEmail = both || channels.indexOf("email") >= 0;
    var contactLabel = w(wantsEmail && wantsSms ? "contact-both" : wantsSms ? "contact-sms" : "contact-email");
    var contact = el("input", {
      id: "restock-contact-" + n,
      name: "contact",
      type: wantsEmail ? "email" : "tel",
      autocomplete: wantsEmail ? "email" : "tel",
      inputmode: wantsEmail ? "email" : "tel",
      required: "",
      "aria-describedby": "restock-status-" + n,
    });
    if (wantsEmail && wantsSms) contact.setAttribute("type", "text");
    var phone = both ? el("input", { id: "restock-phone-" + n, name: "phone", type: "tel", autocomplete: "tel", inputmode: "tel", required: "" }) : null;
    var name = el("input", { id: "restock-name-" + n, name: "name", type: "text", autocomplete: "given-name", maxlength: "80", required: "" });
    var consent = el("input", { id: "restock-consent-" + n, name: "consent", type: "checkbox", required: "" });
    var consentLabel = el("label", { class: "restock-consent", for: "restock-consent-" + n });
    consentLabel.appendChild(consent);
    consentLabel.appendChild(document.createTextNode(w("consent")));
    var honeypot = el("div", { class: "restock-hp", "aria-hidden": "true" });
    var trap = el("input", { name: "website", type: "text", tabindex: "-1", autocomplete: "off" });
    honeypot.appendChild(trap);
    var submit = el("button", { type: "submit" }, w("submit"));
    var status = el("p", { id: "restock-status-" + n, class: "restock-status", role: "status", "aria-live": "polite" });

    form.appendChild(el("label", { for: "restock-contact-" + n }, contactLabel));
    form.appendChild(contact);
    if (phone) {
      form.appendChild(el("label", { for: "restock-phone-" + n }, w("contact-sms")));
      form.appendChild(phone);
    }
    form.appendChild(el("label", { for: "restock-name-" + n }, w("name")));
    form.appendChild(name);
    form.appendChild(consentLabel);
    form.appendChild(honeypot);
    form.appendChild(submit);
    root.appendChild(heading);
    root.appendChild(form);
    root.appendChild(status);

    function say(text, isError) {
      status.textContent = text;
      status.className = "restock-status" + (isError ? " restock-error" : "");
    }

    function joined(body, token) {
      form.hidden = true;
      var where = body.position ? w("position", body.position) + " " : "";
      if (body.status === "unconfirmed") {
        // Double opt-in: the place is kept, but only a tap in the shopper's
        // own inbox or phone confirms it.
        heading.textContent = w("check-title");
        say(where + w("check"));
      } else {
        heading.textContent = w("on-list-title");
        say(where + w("told-once"));
      }
      // Told on both channels, the number's request has its own token;
      // both are kept, space-separated, and leaving leaves both.
      token = token || [body.manage_token, body.also && body.also.manage_token].filter(Boolean).join(" ");
      if (!token) return; // a repeat tap from another browser: it may not manage the request
      remember(sku, token);
      var tokens = token.split(" ");
      token = tokens[0];
      var leave = el("button", { type: "button", class: "restock-secondary" }, w("leave"));
      leave.addEventListener("click", function () {
        leave.disabled = true;
        if (tokens[1]) request("DELETE", "/requests/" + encodeURIComponent(requestOf(tokens[1])), null, tokens[1], function () {});
        request("DELETE", "/requests/" + encodeURIComponent(requestOf(token)), null, token, function (code) {
          if (code >= 200 && code < 300) {
            remember(sku, null);
            leave.remove();
            heading.textContent = w("left-title");
            say(w("left"));
            form.hidden = false;
            submit.disabled = false;
          } else if (code === 404) {
            // Confirmed from the inbox: only the owner's links manage it now.
            remember(sku, null);
            leave.remove();
            say(fromInbox);
          } else {
            leave.disabled = false;
            say(w("try-again"), true);
          }
        });
      });
      root.appendChild(leave);
      leave.focus();
    }

    function request(method, path, payload, token, done) {
      var xhr = new XMLHttpRequest();
      xhr.open(method, endpoint + path);
      xhr.setRequestHeader("Accept", "application/json");
      if (token) xhr.setRequestHeader("Authorization", "Bearer " + token);
      if (payload) xhr.setRequestHeader("Content-Type", "application/json");
      xhr.timeout = 15000;
      xhr.onload = function () {
        var body = {};
        try {
          body = JSON.parse(xhr.responseText || "{}");
        } catch (e) {
          body = {};
        }
        done(xhr.status, body, xhr);
      };
      xhr.onerror = xhr.ontimeout = function () {
        done(0, {}, xhr);
      };
      xhr.send(payload ? JSON.stringify(payload) : null);
    }

    var fromInbox = w("from-inbox");
    var existing = recall(sku);
    if (existing) {
      var kept = existing.split(" ")[0];
      request("GET", "/requests/" + encodeURIComponent(requestOf(kept)), null, kept, function (code, body) {
        var live = ["unconfirmed", "waiting", "offered", "held"];
        if (code === 200 && live.indexOf(body.status) >= 0) joined(body, existing);
        else {
          remember(sku, null);
          // Refused: the place was confirmed from the inbox (whose owner
          // alone manages it now) or has ended.
          if (code === 404) say(fromInbox);
        }
      });
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var value = contact.value.trim();
      if (!value) {
        say(w("enter-contact"), true);
        contact.setAttribute("aria-invalid", "true");
        contact.focus();
        return;
      }
      if (phone && !phone.value.trim()) {
        say(w("enter-contact"), true);
        phone.setAttribute("aria-invalid", "true");
        phone.focus();
        return;
      }
      if (!consent.checked) {
        say(w("tick"), true);
        consent.focus();
        return;
      }
      if (!name.value.trim()) {
        say(w("enter-name"), true);
        name.setAttribute("aria-invalid", "true");
        name.focus();
        return;
      }
      contact.removeAttribute("aria-invalid");
      name.removeAttribute("aria-invalid");
      var payload = { sku: sku, name: name.value.trim(), consent: true, language: pageLanguage(), time_zone: timeZone(), website: trap.value || undefined };
      if (phone) {
        payload.email = value;
        payload.phone = phone.value.trim();
        payload.channel = "both";
      } else if (value.indexOf("@") >= 0) payload.email = value;
      else payload.phone = value;
      submit.disabled = true;
      say(w("adding"));
      var retried = false;
      function answered(code, body, xhr) {
        // Busy for a moment (a drop): nothing was saved; try once more on
        // our own after the wait the shop asks for, before saying so.
        if (code === 503 && !retried) {
          retried = true;
          var pause = Math.min(parseInt(xhr.getResponseHeader("Retry-After") || "1", 10) || 1, 10);
          say(w("retrying"));
          return window.setTimeout(function () {
            request("POST", "/requests", payload, null, answered);
          }, pause * 1000 + Math.floor(Math.random() * 500));
        }
        submit.disabled = false;
        if (code === 200 || code === 201) return joined(body);
        if (code === 0) return say(w("unreachable"), true);
        if (code === 400 || code === 422) {
          // Each field error's message is in the shopper's language; the
          // field it names takes the focus.
          var first = body.errors && body.errors.length ? body.errors[0] : null;
          var named = { name: name, consent: consent, phone: phone || contact };
          var field = (first && named[first.field]) || contact;
          field.setAttribute("aria-invalid", "true");
          field.focus();
          return say((first && first.message) || body.error || w("enter-contact"), true);
        }
        // 404 (not an item to wait for), 409 (opted out), 429 (too many),
        // 503 (busy): the shop says why, in the shopper's language.
        say(body.error || w("went-wrong"), true);
      }
      request("POST", "/requests", payload, null, answered);
    });
  }

  function start() {
    if (!document.getElementById("restock-style")) {
      var style = el("style", { id: "restock-style" });
      style.textContent = STYLE;
      document.head.appendChild(style);
    }
    var roots = document.querySelectorAll("[data-restock-sku],[data-restock-variants],[data-restock-endpoint]");
    var placed = document.querySelectorAll("[data-restock-endpoint]:not([data-restock-after])").length > 0;
    for (var i = 0; i < roots.length; i++) {
      if (roots[i].hasAttribute("data-restock-after") && !place(roots[i], placed)) continue;
      mount(roots[i]);
    }
  }

  // A root that says where it goes (Shopify's app embed, rendered at the
  // end of the page): moved after the first element its selector matches,
  // or dropped where the page places a form of its own (the app block).
  function place(root, placed) {
    if (placed) {
      root.parentNode.removeChild(root);
      return false;
    }
    var anchor = null;
    try {
      anchor = document.querySelector(root.getAttribute("data-restock-after"));
    } catch (e) {
      anchor = null;
    }
    if (anchor && anchor.parentNode) anchor.parentNode.insertBefore(root, anchor.nextSibling);
    return true;
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
