// Holdfast pages: what every page shares. No framework, no third-party code.
"use strict";

const Holdfast = (() => {
  const config = Object.assign({ apiBase: "", identity: "header", signInDomain: "", clientId: "" },
                               window.HOLDFAST_CONFIG || {});
  const NAME_KEY = "holdfast.customer";
  const TOKEN_KEY = "holdfast.idToken";
  // the one sign-in this tab has under way: its state, its PKCE verifier, the page to return to
  const SIGN_IN_KEY = "holdfast.signIn";

  function customer() { return (localStorage.getItem(NAME_KEY) || "").trim(); }

  // The reader's language: the one chosen with the header's switch (remembered), else the first
  // of the browser's that the pages speak, else English. The API answers in it (Accept-Language),
  // and dates and money are written in it by the browser's Intl.
  const LANGUAGE_KEY = "holdfast.lang";
  const LANGUAGES = { en: "English", ru: "Русский" };

  function lang() {
    const chosen = localStorage.getItem(LANGUAGE_KEY);
    if (Object.hasOwn(LANGUAGES, chosen || "")) return chosen;
    const offered = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || ""];
    return offered.map((tag) => String(tag).slice(0, 2).toLowerCase()).find((code) => Object.hasOwn(LANGUAGES, code)) || "en";
  }

  function setLang(code) {
    if (!Object.hasOwn(LANGUAGES, code)) return;
    localStorage.setItem(LANGUAGE_KEY, code);
    location.reload();
  }

  document.documentElement.lang = lang();

  // A page's own words: { en: {...}, ru: {...} } -> the reader's, English where one is missing.
  function words(table) { return Object.assign({}, table.en, table[lang()] || {}); }

  const OWN = words({
    en: { unreachable: "Could not reach the booking service. Check your connection and try again.",
          failed: "The booking service had a problem. Please try again in a moment.",
          refused: "The request was refused (status {status}).",
          retry: "Please try again in {seconds} s.", youAre: "You are", yourName: "Your name", use: "Use",
          signIn: "Sign in", signedIn: "Signed in" },
    ru: { unreachable: "Сервис бронирования недоступен. Проверьте соединение и попробуйте снова.",
          failed: "В сервисе бронирования произошла ошибка. Попробуйте ещё раз чуть позже.",
          refused: "Запрос отклонён (статус {status}).",
          retry: "Попробуйте снова через {seconds} с.", youAre: "Вы", yourName: "Ваше имя", use: "Применить",
          signIn: "Войти", signedIn: "Вы вошли" },
  });

  // "{name}" in a text filled from values (a name without a value stays as it is)
  function fill(template, values = {}) {
    return String(template).replace(/\{(\w+)\}/g, (whole, name) => (Object.hasOwn(values, name) ? String(values[name]) : whole));
  }

  // The customer texts, the API's own (GET /texts): what a page says the engine does is what the
  // engine's answers say. Read once per page.
  let customerTexts = null;
  function texts() {
    if (!customerTexts) {
      customerTexts = api("GET", `/texts?lang=${lang()}`).then((body) => body.texts[lang()])
        .catch((error) => { customerTexts = null; throw error; });
    }
    return customerTexts;
  }

  function setCustomer(name) { localStorage.setItem(NAME_KEY, name.trim()); }

  // The sentence shown for a failed call: the API's own message (its errors are written for
  // people), with what to do about a wait; never the raw body.
  function sentence(status, body, retryAfter) {
    const error = body && body.error;
    let text = error && typeof error.message === "string" && error.message
      ? error.message
      : (status >= 500 ? OWN.failed : fill(OWN.refused, { status }));
    text = text.charAt(0).toUpperCase() + text.slice(1);
    if (!/[.!?]$/.test(text)) text += ".";
    // a validation error names each field and what is wrong with it
    const problems = error && error.details && Array.isArray(error.details.problems) ? error.details.problems : [];
    if (problems.length) {
      text += " " + problems.slice(0, 4).map((p) => `${String(p.field).replace(/\.(\d+)\./g, " $1 ").replace(/[._]/g, " ")}: ${p.problem}.`).join(" ");
    }
    if (retryAfter) text += " " + fill(OWN.retry, { seconds: retryAfter });
    return text;
  }

  class ApiError extends Error {
    constructor(status, body, retryAfter) {
      super(sentence(status, body, retryAfter));
      this.status = status;
      this.code = body && body.error ? body.error.code : "";
      this.details = body && body.error ? body.error.details : undefined;
    }
  }

  function identityHeaders() {
    if (config.identity === "authorizer") {
      const token = sessionStorage.getItem(TOKEN_KEY);
      // the REST API's Cognito user pool authorizer reads the token itself from Authorization
      return token ? { Authorization: token } : {};
    }
    const name = customer();
    return name ? { "X-Customer-Id": name } : {};
  }

  function newKey() {
    if (crypto.randomUUID) return crypto.randomUUID();
    return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  }

  // One call to the API. Options: body, key (Idempotency-Key), organizerKey, headers, etag.
  async function api(method, path, options = {}) {
    const headers = Object.assign({ "Accept-Language": lang() }, identityHeaders(), options.headers || {});
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (options.key) headers["Idempotency-Key"] = options.key;
    if (options.organizerKey) headers["X-Api-Key"] = options.organizerKey;
    if (options.etag) headers["If-None-Match"] = options.etag;
    let answer;
    try {
      answer = await fetch(config.apiBase + path, {
        method, headers, cache: "no-store",
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
    } catch (_) {
      throw new ApiError(0, { error: { message: OWN.unreachable } });
    }
    if (answer.status === 304) return { notModified: true, etag: options.etag };
    if (options.text && answer.ok) return answer.text();
    let body = null;
    try { body = await answer.json(); } catch (_) { body = null; }
    if (!answer.ok) throw new ApiError(answer.status, body, answer.headers.get("Retry-After"));
    if (body && typeof body === "object" && !Array.isArray(body)) {
      Object.defineProperty(body, "etag", { value: answer.headers.get("ETag"), enumerable: false });
    }
    return body;
  }

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function showError(target, error) {
    const box = typeof target === "string" ? document.getElementById(target) : target;
    if (!box) return;
    if (!error) { box.textContent = ""; box.classList.add("hidden"); return; }
    box.textContent = error instanceof Error ? error.message : String(error);
    box.classList.remove("hidden");
  }

  function money(amount) {
    if (!amount) return "";
    const value = Number(amount.value);
    try {
      return new Intl.NumberFormat(lang(), { style: "currency", currency: amount.currency }).format(value);
    } catch (_) { return `${amount.value} ${amount.currency}`; }
  }

  function when(iso) {
    if (!iso) return "";
    const date = new Date(iso);
    return isNaN(date) ? iso : date.toLocaleString(lang(), { dateStyle: "medium", timeStyle: "short" });
  }

  function param(name) { return new URLSearchParams(location.search).get(name); }

  // Bookings this browser made, per event, so the map can colour the customer's own seats.
  function rememberBooking(eventId, bookingId) {
    const all = JSON.parse(localStorage.getItem("holdfast.bookings") || "{}");
    const key = `${customer()}|${eventId}`;
    all[key] = Array.from(new Set([...(all[key] || []), bookingId])).slice(-20);
    localStorage.setItem("holdfast.bookings", JSON.stringify(all));
  }

  function rememberedBookings(eventId) {
    const all = JSON.parse(localStorage.getItem("holdfast.bookings") || "{}");
    return all[`${customer()}|${eventId}`] || [];
  }

  // The header's identity box: a typed name locally, the sign-in on AWS.
  function identityBox(signInError) {
    const box = document.getElementById("who");
    if (!box) return;
    if (config.identity === "authorizer") {
      if (signInError) box.append(el("span", { id: "sign-in-error", class: "error", role: "alert", text: signInError.message }));
      const signedIn = Boolean(sessionStorage.getItem(TOKEN_KEY));
      box.append(signedIn ? el("span", { text: OWN.signedIn })
        : el("button", { type: "button", id: "sign-in", text: OWN.signIn, onclick: () => signIn() }));
      return;
    }
    const input = el("input", { id: "customer-name", "aria-label": OWN.yourName, placeholder: OWN.yourName,
                                value: customer(), autocomplete: "nickname" });
    const save = el("button", { type: "button", class: "secondary", text: OWN.use });
    const apply = () => { setCustomer(input.value); document.dispatchEvent(new CustomEvent("holdfast:identity")); };
    save.addEventListener("click", apply);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") apply(); });
    box.append(el("label", { for: "customer-name", class: "muted", text: OWN.youAre }), input, save);
  }

  // Sign-in on AWS: the user pool's hosted UI, authorization code flow with PKCE. A token never
  // travels in a link (a crafted #id_token= link would sign the visitor in as someone else); the
  // code that comes back is exchanged only if its `state` is the one this tab stored on leaving,
  // and only together with the verifier that never left the tab.
  function base64url(bytes) {
    return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function randomText(size) { return base64url(crypto.getRandomValues(new Uint8Array(size))); }

  // the hosted UI returns to the site's root: the user pool client's only callback URL
  function returnAddress() { return location.origin + "/"; }

  async function signIn() {
    const state = randomText(24);
    const verifier = randomText(48);
    const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
    sessionStorage.setItem(SIGN_IN_KEY, JSON.stringify({ state, verifier, back: location.pathname + location.search }));
    const query = new URLSearchParams({
      response_type: "code", client_id: config.clientId, redirect_uri: returnAddress(), scope: "openid email",
      state, code_challenge: challenge, code_challenge_method: "S256",
    });
    location.assign(`${config.signInDomain}/oauth2/authorize?${query}`);
  }

  class SignInRefused extends Error {}

  // The return from the hosted UI (?code=&state=, or ?error=). Resolves true when the tab now
  // holds a token and goes back to the page the sign-in started from.
  async function finishSignIn() {
    const query = new URLSearchParams(location.search);
    if (!query.has("code") && !query.has("state") && !query.has("error")) return false;
    const stored = JSON.parse(sessionStorage.getItem(SIGN_IN_KEY) || "null");
    // one use, whatever happens next; and the code leaves the address bar and the history
    sessionStorage.removeItem(SIGN_IN_KEY);
    history.replaceState(null, "", location.pathname);
    if (!stored || !query.get("state") || query.get("state") !== stored.state) {
      throw new SignInRefused("This sign-in was not started on this page, so it was refused. Please sign in again.");
    }
    if (!query.get("code")) throw new SignInRefused("The sign-in was not completed. Please sign in again.");
    let body = null;
    try {
      const answer = await fetch(`${config.signInDomain}/oauth2/token`, {
        method: "POST", cache: "no-store",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", client_id: config.clientId,
                                    code: query.get("code"), redirect_uri: returnAddress(),
                                    code_verifier: stored.verifier }),
      });
      body = answer.ok ? await answer.json() : null;
    } catch (_) { body = null; }
    if (!body || typeof body.id_token !== "string") {
      throw new SignInRefused("The sign-in could not be completed. Please sign in again.");
    }
    sessionStorage.setItem(TOKEN_KEY, body.id_token);
    location.replace(stored.back || "/");
    return true;
  }

  // One journal entry (a booking's history) as a list item in the reader's language: its action as
  // the customer texts name it (`said`, from texts(): "journal.<action>"), else the engine's own
  // record, which is English. `record`: the record too, after the name (the operator's view, where
  // it carries the amounts, ids and an operator's note).
  function journalItem(entry, said, record = false) {
    const named = (said || {})[`journal.${entry.action}`];
    const own = el("span", { lang: "en", class: named ? "muted" : null, text: record && entry.actor
      ? `(${entry.actor}${entry.ids && entry.ids.operator ? `: ${entry.ids.operator}` : ""}): ${entry.decision}` : entry.decision });
    return el("li", { "data-action": entry.action }, el("time", { datetime: entry.at, text: when(entry.at) }),
      named ? el("span", { text: named }) : null, named && record ? " " : null, !named || record ? own : null);
  }

  // Repeats fn every `ms` while the page is visible; fn returning false stops it.
  function every(ms, fn) {
    let timer = null, stopped = false;
    const tick = async () => {
      if (stopped) return;
      let again = true;
      try { again = (await fn()) !== false; } catch (_) { again = true; }
      if (again && !stopped) timer = setTimeout(tick, ms);
    };
    tick();
    return () => { stopped = true; clearTimeout(timer); };
  }

  // The challenge (CAPTCHA) a hold may have to carry (issue 42, finding 13). An offering's view
  // says captcha_required by the rule the hold route applies, and names the widget to load
  // (captcha_widget: its script on the configured origin, SmartCaptcha's on AWS and the payment
  // sandbox's stand-in locally; the pages' Content-Security-Policy allows that origin alone).
  // challenge(box) draws it into box once a view asks for it (need(view)); headers() is what a
  // hold sends (X-Captcha-Token); after a hold, held or refused, the token is spent: reset().
  const widgetScripts = new Map();
  function widgetScript(src) {
    if (!widgetScripts.has(src)) {
      widgetScripts.set(src, new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = src;
        script.async = true;
        script.onload = () => resolve(window.smartCaptcha);
        script.onerror = () => { widgetScripts.delete(src); reject(new Error(src)); };
        document.head.append(script);
      }));
    }
    return widgetScripts.get(src);
  }

  function challenge(box) {
    let widget = null, drawn = null, token = "";
    return {
      async need(view) {
        const wanted = Boolean(view && view.captcha_required);
        box.classList.toggle("hidden", !wanted);
        if (!wanted || drawn || !view.captcha_widget) return;
        drawn = widgetScript(view.captcha_widget.script).then((captcha) => {
          widget = captcha.render(box, { sitekey: view.captcha_widget.site_key, hl: lang(),
                                         callback: (solved) => { token = solved; } });
        }).catch(() => { drawn = null; });
        await drawn;
      },
      headers() { return token ? { "X-Captcha-Token": token } : {}; },
      reset() {
        token = "";
        if (widget !== null && window.smartCaptcha) window.smartCaptcha.reset(widget);
      },
    };
  }

  document.addEventListener("DOMContentLoaded", async () => {
    let refused = null;
    if (config.identity === "authorizer") {
      try {
        if (await finishSignIn()) return;
      } catch (error) { refused = error; }
    }
    identityBox(refused);
  });

  return { config, api, ApiError, el, showError, money, when, param, customer, newKey, every,
           rememberBooking, rememberedBookings, lang, setLang, LANGUAGES, words, fill, texts, journalItem, challenge };
})();
