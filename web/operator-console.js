"use strict";
// The console's team pages: keys with their scopes (GET/POST/DELETE /organizers/me/keys), webhooks
// and their deliveries (/organizers/me/webhooks, docs/api.md "Webhooks"), CSV exports
// (GET /admin/exports/{export}.csv, downloaded page by page) and the audit log
// (GET /organizers/me/audit). Each registers itself on the frame (operator.js).

// ------------------------------------------------------------------------------- keys
(() => {
  const { api, el, showError, words, fill, when } = Holdfast;
  const { key } = HoldfastOperator;
  const SCOPES = ["events:write", "sales:read", "refunds", "reviews", "doors", "parking", "codes", "keys", "webhooks", "exports"];
  const T = words({
    en: { title: "Keys", name: "Name", scopes: "Scopes", offerings: "Only these offerings (ids, comma separated; empty: all)",
          create: "Create key", created: "Key \"{name}\" created. Copy it now: it is shown only once.", all: "all",
          used: "Last used", made: "Created", remove: "Delete", none: "No keys.", removed: "Key deleted.",
          scopeNames: { "events:write": "create and edit offerings", "sales:read": "read sales", refunds: "refunds and cancellations",
                        reviews: "reviews", doors: "doors and check-ins", parking: "parking gates and cases", codes: "promo codes",
                        keys: "keys and audit log", webhooks: "webhooks", exports: "exports" } },
    ru: { title: "Ключи", name: "Название", scopes: "Права", offerings: "Только эти предложения (id через запятую; пусто — все)",
          create: "Создать ключ", created: "Ключ «{name}» создан. Скопируйте его сейчас: он показывается один раз.", all: "все",
          used: "Последнее использование", made: "Создан", remove: "Удалить", none: "Ключей нет.", removed: "Ключ удалён.",
          scopeNames: { "events:write": "создание и правка предложений", "sales:read": "просмотр продаж", refunds: "возвраты и отмены",
                        reviews: "проверки", doors: "входы и проходы", parking: "шлагбаумы и случаи парковки", codes: "промокоды",
                        keys: "ключи и журнал действий", webhooks: "вебхуки", exports: "выгрузки" } },
  });
  let list, error, result;
  HoldfastOperator.section({
    id: "keys", page: "team", scope: "keys", order: 10, title: { en: T.title, ru: T.title }, every: 10000,
    build(card) {
      const name = el("input", { id: "key-name", name: "name", required: true });
      const boxes = el("fieldset", { class: "scopes" }, el("legend", { text: T.scopes }),
        SCOPES.map((scope) => el("label", { class: "check" },
          el("input", { type: "checkbox", name: "scope", value: scope }), `${scope} (${T.scopeNames[scope]})`)));
      const offerings = el("input", { id: "key-offerings", name: "offerings" });
      const form = el("form", { id: "create-key" },
        el("div", { class: "row" }, el("label", { for: "key-name", text: T.name }), name),
        boxes,
        el("div", { class: "row" }, el("label", { for: "key-offerings", text: T.offerings }), offerings),
        el("div", { class: "row" }, el("button", { type: "submit", text: T.create })));
      result = el("div", { id: "key-result", class: "notice hidden", "aria-live": "polite" });
      error = el("p", { id: "keys-error", class: "error hidden", role: "alert" });
      list = el("tbody", { id: "keys" });
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        showError(error, null);
        if (!HoldfastOperator.needKey(error)) return;
        const body = { name: name.value.trim(), scopes: [...form.querySelectorAll("input[name=scope]:checked")].map((box) => box.value) };
        const ids = offerings.value.split(",").map((id) => id.trim()).filter(Boolean);
        if (ids.length) body.offerings = ids;
        try {
          const made = await api("POST", "/organizers/me/keys", { body, organizerKey: key() });
          result.replaceChildren(el("p", { text: fill(T.created, { name: made.name || made.key_id }) }),
            el("code", { id: "new-key", text: made.api_key }));
          result.classList.remove("hidden");
          form.reset();
          refresh();
        } catch (problem) { showError(error, problem); }
      });
      card.append(form, result, error, el("table", {}, el("thead", {}, el("tr", {},
        [T.name, T.scopes, T.made, T.used, ""].map((h) => el("th", { text: h })))), list));
    },
    refresh,
  });
  async function refresh() {
    if (!key()) return;
    try {
      const { keys } = await api("GET", "/organizers/me/keys", { organizerKey: key() });
      showError(error, null);
      list.replaceChildren(...(keys.length ? keys.map((row) => el("tr", { "data-key": row.key_id },
        el("td", {}, el("strong", { text: row.name || row.key_id })),
        el("td", { "data-label": T.scopes, text: (row.scopes || []).join(", ") + (row.offerings ? ` · ${row.offerings.join(", ")}` : "") }),
        el("td", { "data-label": T.made, text: when(row.created_at) }),
        el("td", { "data-label": T.used, text: row.last_used_at ? when(row.last_used_at) : "-" }),
        el("td", {}, el("button", { type: "button", class: "secondary", text: T.remove, "aria-label": `${T.remove}: ${row.name || row.key_id}`,
          onclick: async () => {
            try {
              await api("DELETE", `/organizers/me/keys/${encodeURIComponent(row.key_id)}`, { organizerKey: key(), text: true });
              refresh();
            } catch (problem) { showError(error, problem); }
          } })))) : [el("tr", {}, el("td", { colspan: "5", class: "muted", text: T.none }))]));
    } catch (problem) { showError(error, problem); }
  }
})();

// ------------------------------------------------------------------------------- webhooks
(() => {
  const { api, el, showError, words, fill, when } = Holdfast;
  const { key } = HoldfastOperator;
  // docs/api.md "Webhooks", Events (webhook.test is sent only by the test button)
  const EVENTS = ["order.confirmed", "order.cancelled", "order.expired", "refund.succeeded", "review.opened",
                  "checkin.created", "checkout.created", "order.no_show", "event.changed", "case.opened"];
  const CHOSEN = new Set(["order.confirmed", "order.cancelled", "refund.succeeded"]);
  const T = words({
    en: { title: "Webhooks", url: "Address (https://…)", events: "Events", description: "Description", add: "Add webhook",
          secret: "Signing secret of {url}. Copy it now: it is shown only once.", none: "No webhooks.", test: "Send a test",
          remove: "Delete", deliveries: "Deliveries", redeliver: "Send again", status: "Status", attempts: "Attempts",
          created: "Created", type: "Event", noDeliveries: "No deliveries yet.", sent: "Test event queued.",
          states: { pending: "waiting", delivered: "delivered", failed: "failed (24 h of attempts)", dropped: "dropped" } },
    ru: { title: "Вебхуки", url: "Адрес (https://…)", events: "События", description: "Описание", add: "Добавить вебхук",
          secret: "Секрет подписи для {url}. Скопируйте его сейчас: он показывается один раз.", none: "Вебхуков нет.", test: "Отправить тест",
          remove: "Удалить", deliveries: "Доставки", redeliver: "Отправить снова", status: "Статус", attempts: "Попыток",
          created: "Создана", type: "Событие", noDeliveries: "Доставок пока нет.", sent: "Тестовое событие поставлено в очередь.",
          states: { pending: "ждёт", delivered: "доставлено", failed: "не доставлено (24 ч попыток)", dropped: "отброшено" } },
  });
  let list, error, result;
  async function deliveries(hook, box) {
    try {
      const page = await api("GET", `/organizers/me/webhooks/${encodeURIComponent(hook.webhook_id)}/deliveries`, { organizerKey: key() });
      const rows = page.deliveries || [];
      box.replaceChildren(rows.length ? el("table", {}, el("thead", {}, el("tr", {},
        [T.type, T.status, T.attempts, T.created, ""].map((h) => el("th", { text: h })))),
      el("tbody", {}, rows.map((d) => el("tr", { "data-delivery": d.delivery_id },
        el("td", { text: d.type }), el("td", { "data-label": T.status, "data-status": d.status, text: T.states[d.status] || d.status }),
        el("td", { "data-label": T.attempts, text: String(d.attempts) }), el("td", { "data-label": T.created, text: when(d.created_at) }),
        el("td", {}, el("button", { type: "button", class: "secondary", text: T.redeliver, onclick: async () => {
          try {
            await api("POST", `/organizers/me/webhooks/${encodeURIComponent(hook.webhook_id)}/deliveries/${encodeURIComponent(d.delivery_id)}/redeliver`,
              { organizerKey: key() });
            deliveries(hook, box);
          } catch (problem) { showError(error, problem); }
        } })))))) : el("p", { class: "muted", text: T.noDeliveries }));
    } catch (problem) { box.replaceChildren(el("p", { class: "error", text: problem.message })); }
  }
  function hookCard(hook) {
    const box = el("div", {});
    const details = el("details", {}, el("summary", { text: T.deliveries }), box);
    details.addEventListener("toggle", () => { if (details.open) deliveries(hook, box); });
    return el("article", { class: "card", "data-webhook": hook.webhook_id },
      el("h4", { text: hook.url }),
      el("p", { class: "muted", text: `${hook.events.join(", ")}${hook.description ? ` · ${hook.description}` : ""}` }),
      el("div", { class: "row" },
        el("button", { type: "button", class: "secondary", text: T.test, onclick: async () => {
          try {
            await api("POST", `/organizers/me/webhooks/${encodeURIComponent(hook.webhook_id)}/test`, { organizerKey: key() });
            result.replaceChildren(T.sent);
            result.classList.remove("hidden");
            if (details.open) deliveries(hook, box);
          } catch (problem) { showError(error, problem); }
        } }),
        el("button", { type: "button", class: "secondary", text: T.remove, "aria-label": `${T.remove}: ${hook.url}`, onclick: async () => {
          try {
            await api("DELETE", `/organizers/me/webhooks/${encodeURIComponent(hook.webhook_id)}`, { organizerKey: key(), text: true });
            refresh();
          } catch (problem) { showError(error, problem); }
        } })),
      details);
  }
  HoldfastOperator.section({
    id: "webhooks", page: "webhooks", scope: "webhooks", order: 10, title: { en: T.title, ru: T.title }, every: 15000,
    build(card) {
      const url = el("input", { id: "webhook-url", name: "url", type: "url", required: true });
      const description = el("input", { id: "webhook-description", name: "description" });
      const form = el("form", { id: "create-webhook" },
        el("div", { class: "row" }, el("label", { for: "webhook-url", text: T.url }), url,
          el("label", { for: "webhook-description", text: T.description }), description),
        el("fieldset", { class: "scopes" }, el("legend", { text: T.events }),
          EVENTS.map((name) => el("label", { class: "check" }, el("input", { type: "checkbox", name: "event", value: name, checked: CHOSEN.has(name) }), name))),
        el("div", { class: "row" }, el("button", { type: "submit", text: T.add })));
      result = el("div", { id: "webhook-result", class: "notice hidden", "aria-live": "polite" });
      error = el("p", { id: "webhooks-error", class: "error hidden", role: "alert" });
      list = el("div", { id: "webhooks" });
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        showError(error, null);
        if (!HoldfastOperator.needKey(error)) return;
        const body = { url: url.value.trim(), events: [...form.querySelectorAll("input[name=event]:checked")].map((box) => box.value) };
        if (description.value.trim()) body.description = description.value.trim();
        try {
          const made = await api("POST", "/organizers/me/webhooks", { body, organizerKey: key() });
          result.replaceChildren(el("p", { text: fill(T.secret, { url: made.url }) }), el("code", { id: "webhook-secret", text: made.secret }));
          result.classList.remove("hidden");
          form.reset();
          refresh();
        } catch (problem) { showError(error, problem); }
      });
      card.append(form, result, error, list);
    },
    refresh,
  });
  async function refresh() {
    if (!key()) return;
    try {
      const { webhooks } = await api("GET", "/organizers/me/webhooks", { organizerKey: key() });
      showError(error, null);
      const shown = new Set([...list.querySelectorAll("article[data-webhook]")].map((a) => a.dataset.webhook));
      const wanted = new Set(webhooks.map((hook) => hook.webhook_id));
      if (shown.size !== wanted.size || [...wanted].some((id) => !shown.has(id))) {
        list.replaceChildren(...(webhooks.length ? webhooks.map(hookCard) : [el("p", { class: "muted", text: T.none })]));
      }
    } catch (problem) { showError(error, problem); }
  }
})();

// ------------------------------------------------------------------------------- exports
(() => {
  const { el, showError, words, fill, config, lang, api, newKey, when } = Holdfast;
  const { key } = HoldfastOperator;
  const EXPORTS = ["sales", "attendees", "checkins", "refunds", "receipts"];
  const T = words({
    en: { title: "CSV exports", which: "Export", offering: "Offering id (empty: all)", from: "From (UTC, inclusive)",
          to: "To (UTC, exclusive)", download: "Download", rows: "{file}: {rows} rows.", more: "Next page",
          format: "UTF-8 with a byte order mark (opens in Excel and LibreOffice as is), a header row, comma separated; times ISO 8601 UTC, amounts like 1500.00.",
          names: { sales: "Sales (confirmed orders)", attendees: "Attendees", checkins: "Check-ins", refunds: "Refunds", receipts: "Receipt lines" },
          job: "Whole file (prepared on the server)", preparing: "Preparing {file}…", ready: "{file}: {rows} rows, ready. Download (link valid until {until})",
          failed: "The export could not be made: {reason}", stillRunning: "{file} is still being prepared; look again in a minute.",
          jobs: "Files prepared lately", noJobs: "None yet.", job_line: "{file}, asked {at}: {status}", older: "Older files",
          statuses: { running: "being prepared", ready: "ready", failed: "failed", expired: "expired" }, get: "Download" },
    ru: { title: "Выгрузки CSV", which: "Выгрузка", offering: "Id предложения (пусто — все)", from: "С (UTC, включительно)",
          to: "По (UTC, не включая)", download: "Скачать", rows: "{file}: строк — {rows}.", more: "Следующая страница",
          format: "UTF-8 с меткой порядка байтов (открывается в Excel и LibreOffice как есть), строка заголовков, запятые; время ISO 8601 UTC, суммы вида 1500.00.",
          names: { sales: "Продажи (подтверждённые заказы)", attendees: "Участники", checkins: "Проходы", refunds: "Возвраты", receipts: "Строки чеков" },
          job: "Весь файл (готовится на сервере)", preparing: "Готовим {file}…", ready: "{file}: строк — {rows}, готово. Скачать (ссылка действует до {until})",
          failed: "Выгрузку сделать не удалось: {reason}", stillRunning: "{file} ещё готовится; загляните через минуту.",
          jobs: "Недавно подготовленные файлы", noJobs: "Пока нет.", job_line: "{file}, заказан {at}: {status}", older: "Более ранние файлы",
          statuses: { running: "готовится", ready: "готов", failed: "не удался", expired: "удалён по сроку" }, get: "Скачать" },
  });
  let error, links, form, jobs, older, olderCursor = null, paged = false;
  // the organizer's export jobs, newest first (GET /organizers/me/exports), ten at a time: a ready
  // one with its link; every older one is reached page by page ("Older files", by next_cursor)
  async function listJobs(cursor) {
    let page;
    const query = new URLSearchParams({ limit: "10" });
    if (cursor) query.set("cursor", cursor);
    try { page = await api("GET", `/organizers/me/exports?${query}`, { organizerKey: key() }); } catch (_) { return; }
    const rows = page.exports.map((job) => el("li", { "data-export-listed": job.export_id,
      "data-status": job.status },
      fill(T.job_line, { file: `${job.export}.csv`, at: when(job.created_at), status: T.statuses[job.status] || job.status }),
      job.status === "ready" ? [" ", el("a", { href: job.download_url, text: T.get })] : []));
    if (cursor) jobs.append(...rows);
    else jobs.replaceChildren(...(rows.length ? rows : [el("li", { class: "muted", text: T.noJobs })]));
    paged = Boolean(cursor);
    olderCursor = page.next_cursor || null;
    older.classList.toggle("hidden", !olderCursor);
  }
  async function download(cursor) {
    showError(error, null);
    if (!HoldfastOperator.needKey(error)) return;
    const data = new FormData(form);
    const query = new URLSearchParams();
    for (const name of ["offering", "from", "to"]) if (data.get(name)) query.set(name, data.get(name));
    if (cursor) query.set("cursor", cursor);
    const file = `${data.get("export")}.csv`;
    try {
      // the key goes in a header, so the file is fetched here and handed to the browser as a link
      const answer = await fetch(`${config.apiBase}/admin/exports/${file}?${query}`,
        { headers: { "X-Api-Key": key(), "Accept-Language": lang() }, cache: "no-store" });
      if (!answer.ok) {
        let said = null;
        try { said = await answer.json(); } catch (_) { said = null; }
        throw new Holdfast.ApiError(answer.status, said);
      }
      const blob = await answer.blob();
      const next = answer.headers.get("X-Next-Cursor");
      const link = el("a", { href: URL.createObjectURL(blob), download: file, "data-export": file,
        text: fill(T.rows, { file, rows: answer.headers.get("X-Export-Rows") || "0" }) });
      links.replaceChildren(el("p", {}, link),
        next ? el("p", {}, el("button", { type: "button", class: "secondary", id: "export-next", text: T.more, onclick: () => download(next) })) : "");
      link.click();
    } catch (problem) { showError(error, problem); }
  }
  // a whole export as one file, written by a job (POST /organizers/me/exports): its status is read
  // until it is ready, then its presigned link (valid for a while) is offered
  async function prepare() {
    showError(error, null);
    if (!HoldfastOperator.needKey(error)) return;
    const data = new FormData(form);
    const body = { export: data.get("export") };
    for (const name of ["offering", "from", "to"]) if (data.get(name)) body[name] = data.get(name);
    const file = `${body.export}.csv`;
    try {
      let job = await api("POST", "/organizers/me/exports", { body, key: newKey(), organizerKey: key() });
      links.replaceChildren(el("p", { class: "muted", text: fill(T.preparing, { file }) }));
      for (let tries = 0; job.status === "running" && tries < 60; tries += 1) {
        await new Promise((done) => setTimeout(done, 1000));
        job = await api("GET", `/organizers/me/exports/${encodeURIComponent(job.export_id)}`, { organizerKey: key() });
      }
      if (job.status === "ready") {
        links.replaceChildren(el("p", {}, el("a", { href: job.download_url, "data-export-job": job.export_id,
          text: fill(T.ready, { file, rows: job.rows, until: when(job.download_expires_at) }) })));
      } else if (job.status === "running") {
        links.replaceChildren(el("p", { class: "muted", text: fill(T.stillRunning, { file }) }));
      } else {
        showError(error, fill(T.failed, { reason: (job.error || {}).message || job.status }));
      }
      await listJobs();
    } catch (problem) { showError(error, problem); }
  }
  HoldfastOperator.section({
    id: "exports", page: "exports", scope: "exports", order: 10, title: { en: T.title, ru: T.title }, every: 15000,
    build(card) {
      const pick = el("select", { id: "export-which", name: "export" }, EXPORTS.map((name) => el("option", { value: name, text: T.names[name] })));
      form = el("form", { id: "export" },
        el("div", { class: "row" },
          el("label", { for: "export-which", text: T.which }), pick,
          el("label", { for: "export-offering", text: T.offering }), el("input", { id: "export-offering", name: "offering" })),
        el("div", { class: "row" },
          el("label", { for: "export-from", text: T.from }), el("input", { id: "export-from", name: "from", type: "date" }),
          el("label", { for: "export-to", text: T.to }), el("input", { id: "export-to", name: "to", type: "date" }),
          el("button", { type: "submit", text: T.download }),
          el("button", { type: "button", class: "secondary", id: "export-job", text: T.job, onclick: () => prepare() })));
      form.addEventListener("submit", (e) => { e.preventDefault(); download(null); });
      error = el("p", { id: "export-error", class: "error hidden", role: "alert" });
      links = el("div", { id: "export-links", "aria-live": "polite" });
      jobs = el("ul", { id: "export-jobs" });
      older = el("button", { type: "button", class: "secondary hidden", id: "export-jobs-older", text: T.older,
                             onclick: () => listJobs(olderCursor) });
      card.append(el("p", { class: "muted", text: T.format }), form, error, links, el("h3", { text: T.jobs }), jobs, older);
    },
    // the first ten again, unless older pages are open (they would be folded away under the reader)
    refresh: () => (paged ? undefined : listJobs(null)),
  });
})();

// ------------------------------------------------------------------------------- audit log
(() => {
  const { api, el, showError, words, when } = Holdfast;
  const { key } = HoldfastOperator;
  const T = words({
    en: { title: "Audit log", at: "When", who: "Who", what: "Action", objects: "Objects", platform: "the platform",
          more: "Older entries", none: "Nothing recorded yet." },
    ru: { title: "Журнал действий", at: "Когда", who: "Кто", what: "Действие", objects: "Объекты", platform: "платформа",
          more: "Записи старше", none: "Пока ничего не записано." },
  });
  let body, error, more, cursor = null;
  function rows(entries) {
    return entries.map((entry) => el("tr", {},
      el("td", { text: when(entry.at) }),
      el("td", { "data-label": T.who, text: entry.actor && entry.actor.kind === "key" ? (entry.actor.key_name || entry.actor.key_id) : T.platform }),
      el("td", { "data-label": T.what }, el("code", { text: entry.action })),
      el("td", { "data-label": T.objects, text: Object.entries(entry.objects || {}).map(([k, v]) => `${k}: ${v}`).join(", ") })));
  }
  async function load(after) {
    if (!key()) return;
    try {
      const page = await api("GET", `/organizers/me/audit${after ? `?cursor=${encodeURIComponent(after)}` : ""}`, { organizerKey: key() });
      showError(error, null);
      if (after) body.append(...rows(page.entries));
      else body.replaceChildren(...(page.entries.length ? rows(page.entries) : [el("tr", {}, el("td", { colspan: "4", class: "muted", text: T.none }))]));
      cursor = page.next_cursor;
      more.classList.toggle("hidden", !cursor);
    } catch (problem) { showError(error, problem); }
  }
  HoldfastOperator.section({
    id: "audit", page: "audit", scope: "keys", order: 10, title: { en: T.title, ru: T.title }, every: 10000,
    build(card) {
      body = el("tbody", { id: "audit" });
      error = el("p", { id: "audit-error", class: "error hidden", role: "alert" });
      more = el("button", { type: "button", class: "secondary hidden", id: "audit-more", text: T.more, onclick: () => load(cursor) });
      card.append(error, el("table", {}, el("thead", {}, el("tr", {}, [T.at, T.who, T.what, T.objects].map((h) => el("th", { text: h })))), body), more);
    },
    refresh() { return load(null); },
  });
})();
