"use strict";
// The operator console's frame: the organizer key and the operator's name, a navigation of pages
// (one per area: sales, events, services and resources, ...), and a registry of sections. Each
// product's section lives in its own file (operator-lots.js, operator-services.js, checkins.js,
// operator-console.js) and calls HoldfastOperator.section({...}) when its script runs; every
// section script is loaded with `defer` after this one, so all have registered by
// DOMContentLoaded, when the frame draws them on their pages in their `order`. A section is
//   { id, page, scope, order, title: { en, ru }, build(card) -> void, refresh() -> Promise|void, every: ms }
// `page` is one of PAGES' ids; `scope` the key scope its routes need (a list: any of them; none:
// any key). The page shown is the address's #fragment, so a page can be linked and the browser's
// back button works. Once a key is used the frame asks GET /organizers/me what it may do and hides
// the pages and sections it may not (the API refuses them anyway: this only spares the clicks).
// build() fills the section's card once; refresh() runs when its page is shown and then every
// `every` ms while the page is visible (Holdfast.every), and again when the operator presses Use.
const HoldfastOperator = (() => {
  const { el, words, lang, api } = Holdfast;
  const sections = [];

  const PAGES = [
    ["sales", { en: "Sales", ru: "Продажи" }],
    ["events", { en: "Events", ru: "События" }],
    ["services", { en: "Services and resources", ru: "Услуги и ресурсы" }],
    ["lots", { en: "Lots and gates", ru: "Парковки и шлагбаумы" }],
    ["doors", { en: "Doors and check-ins", ru: "Входы и проходы" }],
    ["reviews", { en: "Reviews and cases", ru: "Проверки и случаи" }],
    ["team", { en: "Team and keys", ru: "Команда и ключи" }],
    ["webhooks", { en: "Webhooks", ru: "Вебхуки" }],
    ["exports", { en: "Exports", ru: "Выгрузки" }],
    ["codes", { en: "Codes and blocks", ru: "Коды и блоки" }],
    ["audit", { en: "Audit log", ru: "Журнал действий" }],
  ];

  const T = words({
    en: { needKey: "Enter the organizer key at the top of the page and press Use.",
          needName: "Enter your name at the top of the page and press Use: every decision records who took it.",
          needNote: "Write a note: it explains the decision to whoever reads the journal later.",
          journal: "Journal", loadingJournal: "Loading the journal…", customer: "Customer {who}",
          console: "Console", notAllowed: "This key may not use this page: it lacks the scope {scope}.",
          keyIs: "Key \"{name}\": {scopes}.", keyAll: "every scope", keyOfferings: " Limited to offerings: {ids}.",
          badKey: "This key is not accepted: check it and press Use again." },
    ru: { needKey: "Введите ключ организатора вверху страницы и нажмите «Применить».",
          needName: "Введите своё имя вверху страницы и нажмите «Применить»: каждое решение записывается с именем.",
          needNote: "Напишите примечание: оно объясняет решение тому, кто позже прочтёт журнал.",
          journal: "Журнал", loadingJournal: "Загружаем журнал…", customer: "Покупатель {who}",
          console: "Разделы", notAllowed: "Этому ключу раздел недоступен: нет права {scope}.",
          keyIs: "Ключ «{name}»: {scopes}.", keyAll: "все права", keyOfferings: " Только предложения: {ids}.",
          badKey: "Ключ не принят: проверьте его и снова нажмите «Применить»." },
  });

  function key() { return sessionStorage.getItem("holdfast.organizerKey") || ""; }
  function operator() { return (localStorage.getItem("holdfast.operator") || "").trim(); }

  function needKey(box) {
    if (key()) return true;
    Holdfast.showError(box, T.needKey);
    return false;
  }

  function section(definition) {
    if (sections.some((s) => s.id === definition.id)) throw new Error(`section ${definition.id} registered twice`);
    sections.push(Object.assign({ order: 100, every: 0, page: "sales", scope: null }, definition));
  }

  // A count in the reader's language: forms { one, few, many, other } with {count} (Intl plural rules)
  const plurals = new Intl.PluralRules(lang());
  function count(forms, n) { return Holdfast.fill(forms[plurals.select(n)] || forms.other, { count: n }); }

  // The journal as every section shows it: each step in the reader's language, the engine's record
  // after it (Holdfast.journalItem).
  async function journalList(entries) {
    let said = {};
    try { said = await Holdfast.texts(); } catch (_) { said = {}; }
    return el("ol", { class: "journal" }, entries.map((entry) => Holdfast.journalItem(entry, said, true)));
  }

  // What the key in use may do (GET /organizers/me's `key`); null before a key is known: all shown
  let rights = null;
  function allowed(scope) {
    if (!scope || !rights) return true;
    return (Array.isArray(scope) ? scope : [scope]).some((one) => rights.scopes.includes(one));
  }
  function holds(scope) { return allowed(scope); }

  const pageOf = (id) => document.getElementById(`page-${id}`);
  function current() {
    const wanted = window.location.hash.slice(1);
    const open = PAGES.map(([id]) => id).filter((id) => pageAllowed(id));
    return open.includes(wanted) ? wanted : (open[0] || PAGES[0][0]);
  }
  function pageSections(id) { return sections.filter((s) => s.page === id); }
  // a page is offered when the key may use one of its sections that needs a scope (the local
  // clock, which needs none, does not keep the sales page for a key that may not read sales)
  function pageAllowed(id) {
    const scoped = pageSections(id).filter((s) => s.scope);
    return !scoped.length || scoped.some((s) => allowed(s.scope));
  }

  function show() {
    const id = current();
    for (const [pageId] of PAGES) {
      const box = pageOf(pageId);
      if (box) box.hidden = pageId !== id;
      const link = document.querySelector(`nav.console a[href="#${pageId}"]`);
      if (link) {
        link.parentElement.hidden = !pageAllowed(pageId);
        if (pageId === id) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
      }
    }
    for (const s of sections) {
      const card = document.getElementById(`section-${s.id}`);
      if (card) card.hidden = !allowed(s.scope);
      if (s.page === id && allowed(s.scope) && s.refresh) s.refresh();
    }
  }

  function draw() {
    const host = document.getElementById("sections");
    const lng = lang();
    const nav = el("nav", { class: "console", "aria-label": T.console },
      el("ul", {}, PAGES.map(([id, title]) => el("li", {}, el("a", { href: `#${id}`, text: title[lng] || title.en })))));
    host.before(nav);
    for (const [id, title] of PAGES) {
      host.append(el("div", { class: "page", id: `page-${id}`, hidden: true }));
    }
    for (const s of sections.sort((a, b) => a.order - b.order)) {
      const card = el("section", { class: "card", id: `section-${s.id}`, "aria-labelledby": `section-${s.id}-title` },
        el("h2", { id: `section-${s.id}-title`, text: s.title[lng] || s.title.en }));
      (pageOf(s.page) || pageOf("sales")).append(card);
      s.build(card);
      // a section refreshes on its own page only: the others wait until they are shown
      if (s.refresh) s.stop = Holdfast.every(s.every || 3000, () => (current() === s.page && allowed(s.scope) ? s.refresh() : null));
    }
    window.addEventListener("hashchange", show);
    show();
  }

  async function learnRights() {
    const said = document.getElementById("key-rights");
    if (!key()) { rights = null; said.textContent = ""; show(); return; }
    try {
      const me = await api("GET", "/organizers/me", { organizerKey: key() });
      rights = me.key;
      const scopes = rights.scopes.length ? rights.scopes.join(", ") : T.keyAll;
      said.textContent = Holdfast.fill(T.keyIs, { name: rights.name || rights.key_id, scopes })
        + (rights.offerings ? Holdfast.fill(T.keyOfferings, { ids: rights.offerings.join(", ") }) : "");
    } catch (_) {
      rights = null;
      said.textContent = T.badKey;
    }
    show();
  }

  document.addEventListener("DOMContentLoaded", () => {
    const F = words({
      en: { heading: "Operator", key: "Organizer key", name: "Your name (recorded with decisions)", use: "Use" },
      ru: { heading: "Оператор", key: "Ключ организатора", name: "Ваше имя (записывается с решениями)", use: "Применить" },
    });
    for (const node of document.querySelectorAll("[data-text]")) node.textContent = F[node.dataset.text];
    const $ = (id) => document.getElementById(id);
    $("org-key").value = key();
    $("operator").value = operator();
    $("org-save").addEventListener("click", () => {
      sessionStorage.setItem("holdfast.organizerKey", $("org-key").value.trim());
      localStorage.setItem("holdfast.operator", $("operator").value.trim());
      document.dispatchEvent(new CustomEvent("holdfast:organizer"));
      learnRights();
    });
    draw();
    learnRights();
  });

  // A case's "resolve" button (gate cases, check-in cases): the operator's name and a note are
  // needed first; the answer says which resolution was taken, hides the controls and shows the
  // case's journal. ``words`` are the section's own texts (resolvedAs, and each resolution's name).
  function resolveCase(button, { path, choice, note, failure, result, controls, card, showJournal, words }) {
    const { showError, fill } = Holdfast;
    button.addEventListener("click", async () => {
      showError(failure, null);
      if (!needKey(failure)) return;
      if (!operator()) { showError(failure, T.needName); return; }
      if (!note.value.trim()) { showError(failure, T.needNote); note.focus(); return; }
      button.disabled = true;
      try {
        const after = await api("POST", path,
          { body: { resolution: choice.value, operator: operator(), note: note.value.trim() }, organizerKey: key() });
        const decided = (after.resolution || {}).resolution || choice.value;
        result.textContent = fill(words.resolvedAs, { resolution: words[decided] || decided });
        result.classList.remove("hidden");
        card.dataset.status = after.status;
        controls.classList.add("hidden");
        showJournal(after.journal);
      } catch (problem) { showError(failure, problem); button.disabled = false; }
    });
  }

  return { section, key, operator, needKey, journalList, count, holds, resolveCase, T };
})();

// ------------------------------------------------------------------ events: create and publish
(() => {
  const { api, el, showError, when, newKey, words, fill } = Holdfast;
  const { key } = HoldfastOperator;
  const T = words({
    en: {
      title: "New event", name: "Name", venue: "Venue", city: "City", category: "Category", starts: "Starts",
      price: "Price", currency: "Currency", hold: "Hold time, seconds", places: "Places", seated: "Seat map (rows)",
      general: "General admission (a count)", rows: "Rows, as name:seats", capacity: "Capacity", publish: "Publish now",
      create: "Create event", badRow: "\"{part}\" is not a row: write rows as name:seats, for example A:10, B:12.",
      noRows: "Give at least one row, for example A:10.", noStart: "Give the date and time the event starts.",
      created: "Created \"{name}\" with {places}{published}. ", andPublished: " and published it",
      notPublished: " (not published yet)", open: "Open its page",
      placesCount: { one: "{count} place", other: "{count} places" },
    },
    ru: {
      title: "Новое событие", name: "Название", venue: "Площадка", city: "Город", category: "Категория", starts: "Начало",
      price: "Цена", currency: "Валюта", hold: "Время брони, секунды", places: "Места", seated: "Схема зала (ряды)",
      general: "Входные билеты (количество)", rows: "Ряды, как ряд:мест", capacity: "Вместимость", publish: "Опубликовать сразу",
      create: "Создать событие", badRow: "«{part}» — не ряд: пишите ряды как ряд:мест, например A:10, B:12.",
      noRows: "Укажите хотя бы один ряд, например A:10.", noStart: "Укажите дату и время начала.",
      created: "Создано «{name}»: {places}{published}. ", andPublished: ", опубликовано",
      notPublished: " (ещё не опубликовано)", open: "Открыть страницу",
      placesCount: { one: "{count} место", few: "{count} места", many: "{count} мест", other: "{count} места" },
    },
  });

  function parseRows(text) {
    const rows = [];
    for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
      const match = /^([A-Za-z0-9]+)\s*:\s*(\d+)$/.exec(part);
      if (!match) throw new Error(fill(T.badRow, { part }));
      rows.push({ name: match[1], seats: Number(match[2]) });
    }
    if (!rows.length) throw new Error(T.noRows);
    return rows;
  }

  function field(label, input, attrs = {}) { return el("label", attrs, label, " ", input); }

  HoldfastOperator.section({
    id: "create", page: "events", scope: "events:write", order: 10, title: { en: T.title, ru: T.title },
    build(card) {
      const kind = el("select", { name: "kind", id: "kind" },
        el("option", { value: "seated", text: T.seated }), el("option", { value: "general", text: T.general }));
      const rowsLabel = field(T.rows, el("input", { name: "rows", value: "A:8, B:8, C:8" }), { id: "rows-label" });
      const capacityLabel = field(T.capacity, el("input", { name: "capacity", type: "number", min: "1", value: "100" }),
        { id: "capacity-label", class: "hidden" });
      kind.addEventListener("change", () => {
        rowsLabel.classList.toggle("hidden", kind.value !== "seated");
        capacityLabel.classList.toggle("hidden", kind.value === "seated");
      });
      const result = el("p", { id: "create-result", class: "notice hidden", "aria-live": "polite" });
      const error = el("p", { id: "create-error", class: "error hidden", role: "alert" });
      const form = el("form", { id: "create" },
        el("div", { class: "row" },
          field(T.name, el("input", { name: "name", required: true })), field(T.venue, el("input", { name: "venue", required: true })),
          field(T.city, el("input", { name: "city", required: true })),
          field(T.category, el("input", { name: "category", required: true, value: "concert" }))),
        el("div", { class: "row" },
          field(T.starts, el("input", { name: "starts_at", type: "datetime-local", required: true })),
          field(T.price, el("input", { name: "price", type: "number", min: "0.01", step: "0.01", required: true, value: "1500.00" })),
          field(T.currency, el("input", { name: "currency", value: "RUB", maxlength: "3", size: "4", required: true })),
          field(T.hold, el("input", { name: "hold", type: "number", min: "1", value: "600" }))),
        el("div", { class: "row" }, field(T.places, kind), rowsLabel, capacityLabel,
          el("label", { class: "check" }, el("input", { name: "publish", type: "checkbox", checked: true }), T.publish),
          el("button", { type: "submit", text: T.create })));
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        showError(error, null);
        result.classList.add("hidden");
        if (!HoldfastOperator.needKey(error)) return;
        const data = new FormData(form);
        let body;
        try {
          const starts = new Date(data.get("starts_at"));
          if (isNaN(starts)) throw new Error(T.noStart);
          body = {
            name: data.get("name"), venue: data.get("venue"), city: data.get("city"), category: data.get("category"),
            starts_at: starts.toISOString(),
            price: { value: Number(data.get("price")).toFixed(2), currency: data.get("currency").toUpperCase() },
            hold_ttl_seconds: Number(data.get("hold")),
          };
          if (data.get("kind") === "seated") body.seat_map = { rows: parseRows(data.get("rows")) };
          else body.capacity = Number(data.get("capacity"));
        } catch (problem) { showError(error, problem); return; }
        try {
          const event = await api("POST", "/events", { body, key: newKey(), organizerKey: key() });
          let published = false;
          if (data.get("publish")) {
            await api("POST", `/events/${encodeURIComponent(event.event_id)}/publish`, { organizerKey: key() });
            published = true;
          }
          result.replaceChildren(fill(T.created, { name: event.name, places: HoldfastOperator.count(T.placesCount, event.capacity),
                                                   published: published ? T.andPublished : T.notPublished }),
            el("a", { href: `event.html?id=${encodeURIComponent(event.event_id)}`, text: T.open }), ".");
          result.classList.remove("hidden");
        } catch (problem) { showError(error, problem); }
      });
      card.append(form, result, error);
    },
  });

  // ------------------------------------------------------------------ live sales of events
  const S = words({
    en: { title: "Sales", event: "Event", available: "Available", held: "Held", sold: "Sold", page: "Page",
          part: "{name}: {sold} sold, {held} held, {available} available" },
    ru: { title: "Продажи", event: "Событие", available: "Свободно", held: "В брони", sold: "Продано", page: "Страница",
          part: "{name}: продано {sold}, в брони {held}, свободно {available}" },
  });
  // sales per price category and per zone (an event priced by category, issue 43)
  const parts = (event) => [...Object.entries(event.by_price_category || {}).map(([name, c]) => ({ name, ...c })),
                            ...(event.zones || []).map((z) => ({ name: z.name, ...(z.counts || {}) }))]
    .map((c) => [el("br"), el("span", { class: "muted", "data-part": c.name, text: fill(S.part, c) })]).flat();
  let tbody = null;
  HoldfastOperator.section({
    id: "sales", page: "sales", scope: "sales:read", order: 20, title: { en: S.title, ru: S.title }, every: 2000,
    build(card) {
      tbody = el("tbody", { id: "sales" });
      card.append(el("table", {}, el("thead", {}, el("tr", {},
        [S.event, S.available, S.held, S.sold, S.page].map((h) => el("th", { text: h })))), tbody));
    },
    async refresh() {
      // only the signed-in organizer's own offerings (GET /admin/sales), each with its live counts
      let offerings = [];
      try {
        offerings = (await api("GET", "/admin/sales", { organizerKey: key() })).offerings;
      } catch (_) { /* no key yet, or a wrong one: the table stays empty */ }
      tbody.replaceChildren(...offerings.filter((event) => event.counts).slice(0, 30).map((event) => el("tr", { "data-event": event.event_id },
        el("td", {}, el("strong", { text: event.name }), el("br"), el("span", { class: "muted", text: when(event.starts_at) }),
          ...parts(event)),
        el("td", { "data-label": S.available, text: event.counts.available }),
        el("td", { "data-label": S.held, text: event.counts.held }),
        el("td", { "data-label": S.sold, text: event.counts.sold }),
        el("td", {}, el("a", { href: `event.html?id=${encodeURIComponent(event.event_id)}`, text: S.page })))));
    },
  });
})();

// ------------------------------------------------------------------ each sale's fiscal receipts
// One offering's confirmed orders with their 54-FZ receipts (GET /admin/sales/{offering_id}): the
// payment's, each settlement (an order's line's own) and a refund's, with their state and amount.
(() => {
  const { api, el, showError, words, fill, when, money } = Holdfast;
  const { key } = HoldfastOperator;
  const T = words({
    en: { title: "Sales and their receipts", offering: "Offering", show: "Show sales", sale: "Sale", paid: "Paid",
          amount: "Amount", receipts: "Receipts", none: "No confirmed sales yet.", noReceipts: "no receipts (receipts off)",
          more: "More sales", line: "line {line}",
          types: { payment: "payment receipt", settlement: "settlement receipt", refund: "refund receipt" },
          states: { issued: "issued", due: "due", requested: "requested", sent: "sent", failed: "failed" } },
    ru: { title: "Продажи и их чеки", offering: "Предложение", show: "Показать продажи", sale: "Продажа", paid: "Оплачено",
          amount: "Сумма", receipts: "Чеки", none: "Подтверждённых продаж пока нет.", noReceipts: "без чеков (чеки выключены)",
          more: "Ещё продажи", line: "строка {line}",
          types: { payment: "чек прихода", settlement: "чек полного расчёта", refund: "чек возврата" },
          states: { issued: "выдан", due: "ожидается", requested: "запрошен", sent: "отправлен", failed: "не удался" } },
  });
  let pick, body, error, more, cursor = null;
  function receipt(r) {
    const words = [T.types[r.type] || r.type, r.line_id ? fill(T.line, { line: r.line_id }) : "",
                   T.states[r.status] || r.status, money(r.amount), r.at ? when(r.at) : ""].filter(Boolean);
    return el("li", { "data-receipt": `${r.type}:${r.status}${r.line_id ? `:${r.line_id}` : ""}`, text: words.join(" · ") });
  }
  async function show(next) {
    showError(error, null);
    if (!HoldfastOperator.needKey(error) || !pick.value) return;
    try {
      const query = new URLSearchParams({ limit: "20" });
      if (next) query.set("cursor", next);
      const page = await api("GET", `/admin/sales/${encodeURIComponent(pick.value)}?${query}`, { organizerKey: key() });
      const rows = page.sales.map((sale) => el("tr", { "data-sale": sale.booking_id },
        el("td", { "data-label": T.sale, text: sale.booking_id }),
        el("td", { "data-label": T.paid, text: when(sale.confirmed_at) }),
        el("td", { "data-label": T.amount, text: money(sale.amount) }),
        el("td", { "data-label": T.receipts }, sale.receipts.length
          ? el("ul", { class: "receipts" }, sale.receipts.map(receipt)) : el("span", { class: "muted", text: T.noReceipts }))));
      if (next) body.append(...rows);
      else body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { colspan: "4", class: "muted", text: T.none }))]));
      cursor = page.next_cursor;
      more.classList.toggle("hidden", !cursor);
    } catch (problem) { showError(error, problem); }
  }
  HoldfastOperator.section({
    id: "sale-receipts", page: "sales", scope: "sales:read", order: 30, title: { en: T.title, ru: T.title }, every: 15000,
    build(card) {
      pick = el("select", { id: "sale-receipts-offering" });
      body = el("tbody", { id: "sale-receipts" });
      error = el("p", { id: "sale-receipts-error", class: "error hidden", role: "alert" });
      more = el("button", { type: "button", class: "secondary hidden", id: "sale-receipts-more", text: T.more, onclick: () => show(cursor) });
      const form = el("form", { id: "sale-receipts-form" }, el("div", { class: "row" },
        el("label", { for: "sale-receipts-offering", text: T.offering }), pick, el("button", { type: "submit", text: T.show })));
      form.addEventListener("submit", (e) => { e.preventDefault(); show(null); });
      card.append(form, error, el("table", {}, el("thead", {}, el("tr", {},
        [T.sale, T.paid, T.amount, T.receipts].map((h) => el("th", { text: h })))), body), more);
    },
    async refresh() {
      // the organizer's own offerings to choose from (GET /admin/sales), the chosen one kept
      let offerings = [];
      try { offerings = (await api("GET", "/admin/sales", { organizerKey: key() })).offerings; } catch (_) { return; }
      const chosen = pick.value;
      pick.replaceChildren(...offerings.map((o) => el("option", { value: o.event_id, text: o.name })));
      if (offerings.some((o) => o.event_id === chosen)) pick.value = chosen;
    },
  });
})();

// ---------------------------------------------------------------------------- sale metrics
// On AWS they are CloudWatch metrics: the section links the stack's dashboard (config
// metricsDashboardUrl). Locally the API stand-in answers GET /_local/metrics with what
// `python -m devstack.admin metrics` prints; there is no such route on AWS (docs/web-pages.md).
(() => {
  const { api, el, showError, words } = Holdfast;
  const { key } = HoldfastOperator;
  const T = words({
    en: { title: "Sale metrics", enterKey: "Enter the organizer key to see them.", dashboard: "Open the sale's CloudWatch dashboard",
          cloud: "Holds, sold-out answers, confirmations, late payments, reviews and expiry lag are CloudWatch metrics of the deployment.",
          local: "From the local stack's logs, as python -m holdfast.tools.cli metrics reads them.", metric: "Metric", hour: "Last hour",
          holds: "Holds made", soldOut: "Sold-out answers", confirmations: "Confirmations", retaken: "Late payments: places taken again",
          refunded: "Late payments: refunded", toReview: "Late payments: to review", reviews: "Reviews opened / resolved",
          expired: "Holds released at their deadline", lag: "Expiry lag, worst", average: "average",
          demoOnly: "On the local stack these are the whole stack's figures, shown to the demo organizer's key only." },
    ru: { title: "Показатели продаж", enterKey: "Введите ключ организатора, чтобы их увидеть.", dashboard: "Открыть панель CloudWatch",
          cloud: "Брони, ответы «всё продано», подтверждения, поздние оплаты, проверки и задержка истечения — метрики CloudWatch.",
          local: "Из журналов локального стенда, как их читает python -m holdfast.tools.cli metrics.", metric: "Показатель", hour: "За час",
          holds: "Сделано броней", soldOut: "Ответы «всё продано»", confirmations: "Подтверждения", retaken: "Поздние оплаты: места заняты снова",
          refunded: "Поздние оплаты: возвращены", toReview: "Поздние оплаты: на проверку", reviews: "Проверки открыты / решены",
          expired: "Брони, снятые в срок", lag: "Задержка истечения, худшая", average: "в среднем",
          demoOnly: "На локальном стенде это показатели всего стенда: их видит только ключ демо-организатора." },
  });
  const seconds = new Intl.NumberFormat(Holdfast.lang(), { style: "unit", unit: "second", maximumFractionDigits: 1, minimumFractionDigits: 1 });
  const sum = (metrics, name) => (metrics[name] ? metrics[name].sum : 0);
  const METRICS = [
    [T.holds, (m) => sum(m, "HoldsMade")], [T.soldOut, (m) => sum(m, "SoldOutAnswers")],
    [T.confirmations, (m) => sum(m, "Confirmations")], [T.retaken, (m) => sum(m, "LatePaymentsRetaken")],
    [T.refunded, (m) => sum(m, "LatePaymentsRefunded")], [T.toReview, (m) => sum(m, "LatePaymentsToReview")],
    [T.reviews, (m) => `${sum(m, "ReviewsOpened")} / ${sum(m, "ReviewsResolved")}`],
    [T.expired, (m) => sum(m, "HoldsExpired")],
    [T.lag, (m) => (m.ExpiryLagSeconds && m.ExpiryLagSeconds.samples
      ? `${seconds.format(m.ExpiryLagSeconds.max)} (${T.average} ${seconds.format(m.ExpiryLagSeconds.sum / m.ExpiryLagSeconds.samples)})` : "-")],
  ];
  const dashboard = (window.HOLDFAST_CONFIG || {}).metricsDashboardUrl;
  let where, table, body, error;
  HoldfastOperator.section({
    id: "metrics", page: "sales", scope: "sales:read", order: 90, title: { en: T.title, ru: T.title }, every: 5000,
    build(card) {
      where = el("p", { id: "metrics-where", class: "muted", text: dashboard ? T.cloud : T.enterKey });
      body = el("tbody", { id: "metrics" });
      table = el("table", { id: "metrics-table", class: "hidden" },
        el("thead", {}, el("tr", {}, el("th", { text: T.metric }), el("th", { text: T.hour }))), body);
      error = el("p", { id: "metrics-error", class: "error hidden", role: "alert" });
      card.append(where);
      if (dashboard) card.append(el("p", {}, el("a", { href: dashboard, target: "_blank", rel: "noopener", text: T.dashboard })));
      card.append(table, error);
    },
    async refresh() {
      if (dashboard || !key()) return;
      try {
        const { metrics } = await api("GET", "/_local/metrics?minutes=60", { organizerKey: key() });
        showError(error, null);
        body.replaceChildren(...METRICS.map(([label, value]) =>
          el("tr", {}, el("td", { text: label }), el("td", { "data-label": T.hour, text: String(value(metrics)) }))));
        table.classList.remove("hidden");
        where.textContent = T.local;
      } catch (problem) {
        // the local stand-in reads the whole stack's logs, so it answers the demo organizer's key
        // alone: another organizer's key is told so, not shown an error (devstack/aws/sale_metrics.py)
        if (problem.status === 401) {
          showError(error, null);
          table.classList.add("hidden");
          where.textContent = T.demoOnly;
          return;
        }
        showError(error, problem);
      }
    },
  });
})();

// --------------------------------------------------------------------- the local stack's clock
// Locally the API stand-in answers GET/POST /dev/clock (devstack/aws/timecontrol.py): the stack's
// time, whether it is idle, and a move forward that fires what falls due. There is no such route on
// AWS, where the section stays hidden (docs/local-stack.md, "Time: the stack's clock").
(() => {
  const { api, el, showError, words, fill } = Holdfast;
  const T = words({
    en: { title: "Local stack clock", now: "Stack time: {now} (ahead of this machine by {offset} s).",
          idle: "Idle: nothing runs or waits to run.", busy: "Busy: work is under way.",
          seconds: "Seconds to move forward", move: "Move the clock",
          moved: "Moved: the stack's time is now {now}, in {steps} steps." },
    ru: { title: "Часы локального стенда", now: "Время стенда: {now} (впереди этой машины на {offset} с).",
          idle: "Простаивает: ничего не выполняется и не ждёт выполнения.", busy: "Занят: идёт работа.",
          seconds: "На сколько секунд перевести вперёд", move: "Перевести часы",
          moved: "Переведено: время стенда теперь {now}, за {steps} шагов." },
  });
  let card, now, state, input, button, result, error;
  HoldfastOperator.section({
    id: "clock", page: "sales", scope: null, order: 95, title: { en: T.title, ru: T.title }, every: 5000,
    build(host) {
      card = host;
      card.classList.add("hidden");
      now = el("p", { id: "clock-now" });
      state = el("p", { id: "clock-state", class: "muted" });
      input = el("input", { id: "clock-seconds", type: "number", min: "0", step: "1", value: "600" });
      button = el("button", { id: "clock-move", type: "button", text: T.move });
      result = el("p", { id: "clock-result", role: "status" });
      error = el("p", { id: "clock-error", class: "error hidden", role: "alert" });
      card.append(now, state, el("label", { for: "clock-seconds", text: T.seconds }), input, button, result, error);
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          const moved = await api("POST", "/dev/clock", { body: { advance_seconds: Number(input.value) } });
          showError(error, null);
          result.textContent = fill(T.moved, { now: moved.now, steps: moved.steps || 1 });
          show(moved);
        } catch (problem) { showError(error, problem); } finally { button.disabled = false; }
      });
    },
    async refresh() {
      try { show(await api("GET", "/dev/clock")); } catch (_) { card.classList.add("hidden"); }
    },
  });

  function show(clock) {
    card.classList.remove("hidden");
    now.textContent = fill(T.now, { now: clock.now, offset: Math.round(clock.offset_seconds) });
    state.textContent = clock.idle ? T.idle : T.busy;
  }
})();

// ------------------------------------------------------------------------------- reviews
(() => {
  const { api, el, showError, money, words, fill } = Holdfast;
  const { key, operator, needKey, journalList } = HoldfastOperator;
  const T = words({
    en: {
      title: "Bookings waiting for a decision", none: "None right now.", decision: "Decision", note: "Note",
      refund: "Refund the payment", confirm: "Confirm the booking", close: "Close (nothing owed)",
      why: "Why (kept in the journal, never shown to the customer)", record: "Record decision",
      done: "Done: the booking is now {status}.", needs: "Needs a decision", booking: "Booking {id}: {places}, {amount}. ",
      payment: "Payment {id}: {status}", unknown: "outcome unknown", noPayment: "No payment", refundIs: "; refund {status}",
      told: "The customer is told: {text}", seats: "seats {seats}", placesCount: { one: "{count} place", other: "{count} places" },
      paid_in_time_places_resold: "Paid in time, but the places were resold before the payment was reported",
      amount_mismatch: "The amount paid does not match the booking",
      second_payment_for_booking: "A second payment arrived for this booking",
      reconciliation_stuck: "The payment's outcome could not be settled automatically",
    },
    ru: {
      title: "Бронирования, ждущие решения", none: "Сейчас таких нет.", decision: "Решение", note: "Примечание",
      refund: "Вернуть оплату", confirm: "Подтвердить бронирование", close: "Закрыть (ничего не должны)",
      why: "Почему (остаётся в журнале, покупатель его не видит)", record: "Записать решение",
      done: "Готово: статус бронирования — {status}.", needs: "Нужно решение", booking: "Бронирование {id}: {places}, {amount}. ",
      payment: "Платёж {id}: {status}", unknown: "исход неизвестен", noPayment: "Платежа нет", refundIs: "; возврат {status}",
      told: "Покупателю сказано: {text}", seats: "места {seats}",
      placesCount: { one: "{count} место", few: "{count} места", many: "{count} мест", other: "{count} места" },
      paid_in_time_places_resold: "Оплачено вовремя, но места были проданы снова до того, как пришло сообщение об оплате",
      amount_mismatch: "Оплаченная сумма не совпадает с бронированием",
      second_payment_for_booking: "По этому бронированию пришёл второй платёж",
      reconciliation_stuck: "Исход платежа не удалось выяснить автоматически",
    },
  });
  const shown = new Map();   // booking id -> card
  let list, empty, error;

  async function loadJournal(bookingId, target) {
    try {
      const full = await api("GET", `/admin/bookings/${encodeURIComponent(bookingId)}`, { organizerKey: key() });
      target.replaceChildren(el("p", { class: "muted", text: fill(HoldfastOperator.T.customer, { who: full.customer_id || "" }) }),
        await journalList(full.journal || []));
    } catch (problem) { target.replaceChildren(el("p", { class: "error", text: problem.message })); }
  }

  function reviewCard(booking) {
    const review = booking.review || {};
    const payment = booking.payment || {};
    const places = booking.places.seats ? fill(T.seats, { seats: booking.places.seats.join(", ") })
      : HoldfastOperator.count(T.placesCount, booking.places.quantity);
    const failure = el("p", { class: "error hidden", role: "alert" });
    const result = el("p", { class: "notice hidden", "aria-live": "polite" });
    const action = el("select", { "aria-label": T.decision }, el("option", { value: "refund", text: T.refund }),
      el("option", { value: "confirm", text: T.confirm }), el("option", { value: "close", text: T.close }));
    const note = el("textarea", { rows: "2", cols: "40", "aria-label": T.note, placeholder: T.why });
    const journal = el("div", {}, el("p", { class: "muted", text: HoldfastOperator.T.loadingJournal }));
    const button = el("button", { type: "button", text: T.record });
    button.addEventListener("click", async () => {
      showError(failure, null);
      if (!needKey(failure)) return;
      if (!operator()) { showError(failure, HoldfastOperator.T.needName); return; }
      if (!note.value.trim()) { showError(failure, HoldfastOperator.T.needNote); note.focus(); return; }
      button.disabled = true;
      try {
        const after = await api("POST", `/admin/reviews/${encodeURIComponent(booking.booking_id)}/resolve`,
          { body: { action: action.value, operator: operator(), note: note.value.trim() }, organizerKey: key() });
        result.textContent = fill(T.done, { status: after.status.replace(/_/g, " ").toLowerCase() });
        result.classList.remove("hidden");
        loadJournal(booking.booking_id, journal);
      } catch (problem) { showError(failure, problem); }
      finally { button.disabled = false; }
    });
    const card = el("article", { class: "card review", "data-booking": booking.booking_id },
      el("h3", { text: T[review.reason] || review.reason || T.needs }),
      el("p", {}, fill(T.booking, { id: booking.booking_id, places, amount: money(booking.amount) }),
        payment.payment_id ? fill(T.payment, { id: payment.payment_id, status: payment.status || T.unknown }) : T.noPayment,
        payment.refund ? fill(T.refundIs, { status: payment.refund.status }) : "", "."),
      review.next_step ? el("p", { class: "muted", text: fill(T.told, { text: review.next_step }) }) : null,
      el("details", {}, el("summary", { text: HoldfastOperator.T.journal }), journal),
      el("div", { class: "row" }, el("label", {}, T.decision, action), el("label", {}, T.note, note), button),
      failure, result);
    loadJournal(booking.booking_id, journal);
    return card;
  }

  HoldfastOperator.section({
    id: "reviews", page: "reviews", scope: "reviews", order: 80, title: { en: T.title, ru: T.title }, every: 3000,
    build(card) {
      empty = el("p", { id: "reviews-empty", class: "muted", text: T.none });
      list = el("div", { id: "reviews" });
      error = el("p", { id: "error", class: "error hidden", role: "alert" });
      card.append(error, empty, list);
    },
    async refresh() {
      if (!key()) return;
      try {
        const { reviews } = await api("GET", "/admin/reviews", { organizerKey: key() });
        showError(error, null);
        for (const booking of reviews) {
          if (!shown.has(booking.booking_id)) {
            const card = reviewCard(booking);
            shown.set(booking.booking_id, card);
            list.append(card);
          }
        }
        // a resolved case stays on screen with its outcome until the next visit
        empty.classList.toggle("hidden", shown.size > 0 || reviews.length > 0);
      } catch (problem) { showError(error, problem); }
    },
  });
})();
