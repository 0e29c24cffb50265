"use strict";
// The console's codes page (scope `codes`, docs/api.md "Discount and access codes" and "Blocks"):
// an offering's discount and access codes (POST/GET /{events|services|lots}/{id}/codes, ended
// with DELETE .../codes/{code}) and an event's blocks of places kept out of sale
// (POST/GET /events/{id}/blocks, released with DELETE .../blocks/{block_id}). Each section
// registers itself on the frame (operator.js).

// ------------------------------------------------------------------------------- codes
(() => {
  const { api, el, showError, words, fill, money } = Holdfast;
  const { key } = HoldfastOperator;
  const PATHS = { event: "events", service: "services", lot: "lots" };
  const T = words({
    en: { title: "Promo and access codes", of: "Offering", kinds: { event: "Event", service: "Service", lot: "Parking lot" },
          id: "The offering's id", show: "Show codes", code: "Code", kind: "Kind", value: "Value (percent, or an amount)",
          maxUses: "At most this many uses (empty: no limit)", perCustomer: "Per customer (empty: no limit)",
          types: "Ticket types or zones it unlocks (access; comma separated)", create: "Create code",
          forms: { percent: "percent off", fixed: "amount off each place", access: "access (unlocks hidden)" },
          uses: "Uses", state: "State", active: "active", ended: "ended", end: "End", none: "No codes yet.",
          made: "Code {code} created.", pick: "Enter the offering id first.", unlimited: "{uses} of no limit",
          limited: "{uses} of {max}" },
    ru: { title: "Промокоды и коды доступа", of: "Предложение", kinds: { event: "Событие", service: "Услуга", lot: "Парковка" },
          id: "Идентификатор предложения", show: "Показать коды", code: "Код", kind: "Вид", value: "Значение (процент или сумма)",
          maxUses: "Не больше стольких применений (пусто — без предела)", perCustomer: "На покупателя (пусто — без предела)",
          types: "Открываемые типы билетов или зоны (для кода доступа; через запятую)", create: "Создать код",
          forms: { percent: "скидка в процентах", fixed: "скидка суммой с места", access: "доступ (открывает скрытое)" },
          uses: "Применения", state: "Состояние", active: "действует", ended: "закончен", end: "Закончить", none: "Кодов пока нет.",
          made: "Код {code} создан.", pick: "Сначала введите id предложения.", unlimited: "{uses}, без предела",
          limited: "{uses} из {max}" },
  });
  let which, offering, body, error, result, currency = "RUB";
  const base = () => `/${PATHS[which.value]}/${encodeURIComponent(offering.value.trim())}/codes`;

  function shownValue(code) {
    if (code.value === undefined) return "-";
    return typeof code.value === "object" ? money(code.value) : `${code.value} %`;
  }
  function rows(codes) {
    return codes.map((code) => el("tr", { "data-code": code.code },
      el("td", {}, el("strong", { text: code.code })),
      el("td", { "data-label": T.kind, text: T.forms[code.kind] || code.kind }),
      el("td", { "data-label": T.value, text: shownValue(code) }),
      el("td", { "data-label": T.uses, text: code.max_uses ? fill(T.limited, { uses: code.uses, max: code.max_uses })
        : fill(T.unlimited, { uses: code.uses }) }),
      el("td", { "data-label": T.state, text: code.active ? T.active : T.ended }),
      el("td", {}, code.active ? el("button", { type: "button", class: "secondary", text: T.end, "aria-label": `${T.end}: ${code.code}`,
        onclick: async () => {
          try {
            await api("DELETE", `${base()}/${encodeURIComponent(code.code)}`, { organizerKey: key() });
            refresh();
          } catch (problem) { showError(error, problem); }
        } }) : "")));
  }
  async function refresh() {
    if (!key() || !offering || !offering.value.trim()) return;
    try {
      const { codes } = await api("GET", base(), { organizerKey: key() });
      showError(error, null);
      body.replaceChildren(...(codes.length ? rows(codes) : [el("tr", {}, el("td", { colspan: "6", class: "muted", text: T.none }))]));
    } catch (problem) { showError(error, problem); }
  }
  HoldfastOperator.section({
    id: "codes", page: "codes", scope: "codes", order: 10, title: { en: T.title, ru: T.title }, every: 10000,
    build(card) {
      which = el("select", { id: "codes-of", name: "of" }, Object.keys(PATHS).map((k) => el("option", { value: k, text: T.kinds[k] })));
      offering = el("input", { id: "codes-offering", name: "offering", autocomplete: "off" });
      const pick = el("form", { id: "codes-pick" },
        el("div", { class: "row" }, el("label", { for: "codes-of", text: T.of }), which,
          el("label", { for: "codes-offering", text: T.id }), offering,
          el("button", { type: "submit", class: "secondary", text: T.show })));
      pick.addEventListener("submit", (e) => {
        e.preventDefault();
        showError(error, null);
        if (!HoldfastOperator.needKey(error)) return;
        if (!offering.value.trim()) { showError(error, T.pick); return; }
        // a fixed code's amount is in the offering's own currency: read from the offering
        api("GET", `/${PATHS[which.value]}/${encodeURIComponent(offering.value.trim())}`).then((found) => {
          const price = found.price || (found.tariff && found.tariff.hourly) || {};
          currency = price.currency || found.currency || currency;
        }).catch(() => {});
        refresh();
        document.dispatchEvent(new CustomEvent("holdfast:offering", { detail: { of: which.value, id: offering.value.trim() } }));
      });
      const code = el("input", { id: "code-name", name: "code", required: true, autocomplete: "off", maxlength: "32" });
      const form = el("select", { id: "code-kind", name: "kind" }, Object.keys(T.forms).map((k) => el("option", { value: k, text: T.forms[k] })));
      const value = el("input", { id: "code-value", name: "value", inputmode: "decimal" });
      const maxUses = el("input", { id: "code-max", name: "max_uses", type: "number", min: "1", inputmode: "numeric" });
      const perCustomer = el("input", { id: "code-per-customer", name: "per_customer", type: "number", min: "1", inputmode: "numeric" });
      const unlocks = el("input", { id: "code-types", name: "ticket_types" });
      const create = el("form", { id: "create-code" },
        el("div", { class: "row" }, el("label", { for: "code-name", text: T.code }), code,
          el("label", { for: "code-kind", text: T.kind }), form, el("label", { for: "code-value", text: T.value }), value),
        el("div", { class: "row" }, el("label", { for: "code-max", text: T.maxUses }), maxUses,
          el("label", { for: "code-per-customer", text: T.perCustomer }), perCustomer),
        el("div", { class: "row" }, el("label", { for: "code-types", text: T.types }), unlocks,
          el("button", { type: "submit", text: T.create })));
      create.addEventListener("submit", async (e) => {
        e.preventDefault();
        showError(error, null);
        if (!HoldfastOperator.needKey(error)) return;
        if (!offering.value.trim()) { showError(error, T.pick); return; }
        const made = { code: code.value.trim(), kind: form.value };
        if (form.value === "percent") made.value = Number(value.value);
        if (form.value === "fixed") made.value = { value: value.value.trim(), currency };
        if (maxUses.value) made.max_uses = Number(maxUses.value);
        if (perCustomer.value) made.per_customer = Number(perCustomer.value);
        const names = unlocks.value.split(",").map((n) => n.trim()).filter(Boolean);
        if (names.length) made.ticket_types = names;
        try {
          const answer = await api("POST", base(), { body: made, organizerKey: key() });
          result.textContent = fill(T.made, { code: answer.code });
          result.classList.remove("hidden");
          create.reset();
          refresh();
        } catch (problem) { showError(error, problem); }
      });
      result = el("p", { id: "code-result", class: "notice hidden", "aria-live": "polite" });
      error = el("p", { id: "codes-error", class: "error hidden", role: "alert" });
      body = el("tbody", { id: "codes" });
      card.append(pick, create, result, error, el("table", {}, el("thead", {}, el("tr", {},
        [T.code, T.kind, T.value, T.uses, T.state, ""].map((h) => el("th", { text: h })))), body));
    },
    refresh,
  });
})();

// ------------------------------------------------------------------------------- blocks
(() => {
  const { api, el, showError, words, fill, when } = Holdfast;
  const { key } = HoldfastOperator;
  const T = words({
    en: { title: "Places kept back (blocks)", event: "Event id", seats: "Seats (comma separated; or a quantity)",
          quantity: "Quantity", label: "Label (who it is for)", create: "Keep back", release: "Release", none: "No blocks.",
          made: "Kept back: {what}.", places: "{count} place(s)", kept: "Kept", made_at: "Made",
          only: "Blocks are an event's: pick an event above." },
    ru: { title: "Придержанные места (блоки)", event: "Id события", seats: "Места (через запятую; или количество)",
          quantity: "Количество", label: "Пометка (для кого)", create: "Придержать", release: "Вернуть в продажу", none: "Блоков нет.",
          made: "Придержано: {what}.", places: "мест: {count}", kept: "Придержано", made_at: "Создан",
          only: "Блоки бывают только у событий: выберите событие выше." },
  });
  let event, body, error, result;
  const base = () => `/events/${encodeURIComponent(event.value.trim())}/blocks`;
  async function refresh() {
    if (!key() || !event || !event.value.trim()) return;
    try {
      const { blocks } = await api("GET", base(), { organizerKey: key() });
      showError(error, null);
      body.replaceChildren(...(blocks.length ? blocks.map((block) => el("tr", { "data-block": block.block_id },
        el("td", {}, el("strong", { text: block.label || block.block_id })),
        el("td", { "data-label": T.kept, text: block.seats ? block.seats.join(", ") : fill(T.places, { count: block.quantity }) }),
        el("td", { "data-label": T.made_at, text: block.created_at ? when(block.created_at) : "-" }),
        el("td", {}, el("button", { type: "button", class: "secondary", text: T.release, "aria-label": `${T.release}: ${block.label || block.block_id}`,
          onclick: async () => {
            try {
              await api("DELETE", `${base()}/${encodeURIComponent(block.block_id)}`, { organizerKey: key(), text: true });
              refresh();
            } catch (problem) { showError(error, problem); }
          } })))) : [el("tr", {}, el("td", { colspan: "4", class: "muted", text: T.none }))]));
    } catch (problem) { showError(error, problem); }
  }
  HoldfastOperator.section({
    id: "blocks", page: "codes", scope: "codes", order: 20, title: { en: T.title, ru: T.title }, every: 10000,
    build(card) {
      event = el("input", { id: "block-event", name: "event", autocomplete: "off" });
      const seats = el("input", { id: "block-seats", name: "seats", autocomplete: "off" });
      const quantity = el("input", { id: "block-quantity", name: "quantity", type: "number", min: "1", inputmode: "numeric" });
      const label = el("input", { id: "block-label", name: "label", maxlength: "100" });
      const form = el("form", { id: "create-block" },
        el("div", { class: "row" }, el("label", { for: "block-event", text: T.event }), event,
          el("label", { for: "block-label", text: T.label }), label),
        el("div", { class: "row" }, el("label", { for: "block-seats", text: T.seats }), seats,
          el("label", { for: "block-quantity", text: T.quantity }), quantity,
          el("button", { type: "submit", text: T.create })));
      // the codes section's offering, when it is an event, is this one's too
      document.addEventListener("holdfast:offering", (e) => {
        if (e.detail.of === "event") { event.value = e.detail.id; refresh(); }
      });
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        showError(error, null);
        if (!HoldfastOperator.needKey(error)) return;
        if (!event.value.trim()) { showError(error, T.only); return; }
        const names = seats.value.split(",").map((n) => n.trim()).filter(Boolean);
        const made = names.length ? { seats: names } : { quantity: Number(quantity.value) };
        if (label.value.trim()) made.label = label.value.trim();
        try {
          const answer = await api("POST", base(), { body: made, organizerKey: key() });
          result.textContent = fill(T.made, { what: answer.seats ? answer.seats.join(", ") : fill(T.places, { count: answer.quantity }) });
          result.classList.remove("hidden");
          seats.value = quantity.value = label.value = "";
          refresh();
        } catch (problem) { showError(error, problem); }
      });
      result = el("p", { id: "block-result", class: "notice hidden", "aria-live": "polite" });
      error = el("p", { id: "blocks-error", class: "error hidden", role: "alert" });
      body = el("tbody", { id: "blocks" });
      card.append(form, result, error, el("table", {}, el("thead", {}, el("tr", {},
        [T.label, T.kept, T.made_at, ""].map((h) => el("th", { text: h })))), body));
    },
    refresh,
  });
})();
