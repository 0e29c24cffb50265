"use strict";
// The operator page's parking sections (registered with HoldfastOperator, operator.js): a new
// lot (spaces by type, tariff), each of the organizer's lots with its live occupancy by type
// (GET /lots/{id}) and its gates (GET /lots/{id}/gates: create, re-key, revoke; a key is shown
// once, in the answer that made it), and the open gate cases (GET /admin/reviews, gate_cases)
// with their resolution (POST /admin/gate-cases/{id}/resolve).
(() => {
  const { api, el, showError, money, when, newKey, words, fill } = Holdfast;
  const { key, needKey, journalList, count } = HoldfastOperator;
  const TYPES = ["REGULAR", "COMPACT", "LARGE", "HANDICAP"];
  const PREFIX = { REGULAR: "R", COMPACT: "C", LARGE: "L", HANDICAP: "H" };
  const T = words({
    en: {
      lots: "Parking lots", newLot: "New lot", name: "Name", city: "City", timezone: "Time zone", hourly: "Price an hour",
      currency: "Currency", cap: "Daily cap (optional)", grace: "Free minutes at the exit", publish: "Publish now",
      spacesOf: "{type} spaces", create: "Create lot", noSpaces: "Give the lot at least one space.",
      created: "Created \"{name}\" with {spaces}{published}.", andPublished: " and published it",
      notPublished: " (not published yet)", none: "No lots yet.",
      REGULAR: "Regular", COMPACT: "Compact", LARGE: "Large", HANDICAP: "Accessible",
      type: "Type", total: "Spaces", available: "Free", held: "Held", reserved: "Reserved", occupied: "Occupied",
      occupancy: "Occupancy now", occupiedOf: { one: "{count} space occupied", other: "{count} spaces occupied" },
      spacesCount: { one: "{count} space", other: "{count} spaces" },
      gates: "Gates", gateName: "Gate name", addGate: "Add gate", noGates: "No gates yet.",
      rekey: "Re-key", revoke: "Revoke", revoked: "revoked {when}", rekeyed: "key replaced {when}", since: "since {when}",
      keyOnce: "The key of gate \"{name}\", shown only now: copy it to the gate's settings. ", keyLabel: "Gate key",
      revokedDone: "Gate \"{name}\" revoked: its key no longer opens anything.", lotPage: "Lot page", published: "published",
      draft: "not published",
      cases: "Gate cases", noCases: "None right now.", resolve: "Record resolution", resolution: "Resolution", note: "Note",
      why: "Why (kept in the case's journal)", resolvedAs: "Resolved: {resolution}.",
      case_entry: "A car is inside without a ticket", case_exit: "A car left without paying what its ticket owed",
      case_payment: "Money for a ticket beyond what its exit counted", plate: "Plate {plate}", opened: "opened {when}",
      due: "due {amount}", unpaid: "unpaid {amount}", paid: "paid {amount}", lotOf: "lot {lot}",
      vehicle_left: "The car has left", charged_on_site: "Charged on site", dismissed: "Dismissed",
      paid_on_site: "Paid on site", waived: "Waived", refunded: "Refunded at the provider", applied_to_debt: "Applied to a debt",
    },
    ru: {
      lots: "Парковки", newLot: "Новая парковка", name: "Название", city: "Город", timezone: "Часовой пояс", hourly: "Цена за час",
      currency: "Валюта", cap: "Предел за сутки (необязательно)", grace: "Бесплатных минут при выезде", publish: "Опубликовать сразу",
      spacesOf: "Места: {type}", create: "Создать парковку", noSpaces: "Дайте парковке хотя бы одно место.",
      created: "Создана «{name}»: {spaces}{published}.", andPublished: ", опубликована",
      notPublished: " (ещё не опубликована)", none: "Парковок пока нет.",
      REGULAR: "обычные", COMPACT: "малые", LARGE: "большие", HANDICAP: "для людей с инвалидностью",
      type: "Тип", total: "Мест", available: "Свободно", held: "В брони", reserved: "Забронировано", occupied: "Занято",
      occupancy: "Занятость сейчас", occupiedOf: { one: "занято {count} место", few: "занято {count} места", many: "занято {count} мест", other: "занято {count} места" },
      spacesCount: { one: "{count} место", few: "{count} места", many: "{count} мест", other: "{count} места" },
      gates: "Шлагбаумы", gateName: "Название шлагбаума", addGate: "Добавить шлагбаум", noGates: "Шлагбаумов пока нет.",
      rekey: "Сменить ключ", revoke: "Отключить", revoked: "отключён {when}", rekeyed: "ключ сменён {when}", since: "с {when}",
      keyOnce: "Ключ шлагбаума «{name}», показан только сейчас: внесите его в настройки шлагбаума. ", keyLabel: "Ключ шлагбаума",
      revokedDone: "Шлагбаум «{name}» отключён: его ключ больше ничего не открывает.", lotPage: "Страница парковки",
      published: "опубликована", draft: "не опубликована",
      cases: "Случаи на шлагбаумах", noCases: "Сейчас таких нет.", resolve: "Записать решение", resolution: "Решение", note: "Примечание",
      why: "Почему (остаётся в журнале случая)", resolvedAs: "Решено: {resolution}.",
      case_entry: "Машина внутри без талона", case_exit: "Машина выехала, не оплатив долг по талону",
      case_payment: "Оплата по талону сверх учтённой при выезде", plate: "Номер {plate}", opened: "открыт {when}",
      due: "к оплате {amount}", unpaid: "не оплачено {amount}", paid: "оплачено {amount}", lotOf: "парковка {lot}",
      vehicle_left: "Машина уехала", charged_on_site: "Оплачено на месте", dismissed: "Отклонено",
      paid_on_site: "Оплачено на месте", waived: "Прощено", refunded: "Возвращено через платёжную систему", applied_to_debt: "Зачтено в долг",
    },
  });
  //: what each kind of case is closed as (products/parking/services/gate_cases.py RESOLUTIONS)
  const RESOLUTIONS = {
    entry: ["vehicle_left", "charged_on_site", "dismissed"],
    exit: ["paid_on_site", "waived", "dismissed"],
    payment: ["refunded", "applied_to_debt", "dismissed"],
  };
  const lotNames = new Map();   // lot id -> name, for the cases

  function field(label, input, attrs = {}) { return el("label", attrs, label, " ", input); }

  // ------------------------------------------------------------------------- a lot's card
  function gateRow(lotId, gate, box) {
    const state = gate.deleted_at ? fill(T.revoked, { when: when(gate.deleted_at) })
      : gate.key_rotated_at ? fill(T.rekeyed, { when: when(gate.key_rotated_at) }) : fill(T.since, { when: when(gate.created_at) });
    const path = `/lots/${encodeURIComponent(lotId)}/gates/${encodeURIComponent(gate.gate_id)}`;
    const act = (label, run) => el("button", { type: "button", class: "secondary", text: label,
      "aria-label": `${label}: ${gate.name}`, onclick: async (e) => {
        showError(box.error, null);
        e.target.disabled = true;
        try { await run(); } catch (problem) { showError(box.error, problem); e.target.disabled = false; }
      } });
    return el("tr", { "data-gate": gate.gate_id, "data-state": gate.deleted_at ? "revoked" : "active" },
      el("td", {}, el("strong", { text: gate.name }), el("br"), el("span", { class: "muted", text: state })),
      el("td", {}, gate.deleted_at ? null : el("div", { class: "row" },
        act(T.rekey, async () => showKey(box, await api("POST", `${path}/key`, { organizerKey: key() }))),
        act(T.revoke, async () => {
          await api("DELETE", path, { organizerKey: key(), text: true });
          box.notice.replaceChildren(fill(T.revokedDone, { name: gate.name }));
          box.notice.classList.remove("hidden");
          loadGates(lotId, box);
        }))));
  }

  function showKey(box, gate) {
    box.notice.replaceChildren(fill(T.keyOnce, { name: gate.name }),
      el("code", { class: "gate-key", "aria-label": T.keyLabel, text: gate.gate_key }));
    box.notice.classList.remove("hidden");
    loadGates(gate.lot_id, box);
  }

  async function loadGates(lotId, box) {
    try {
      const { gates } = await api("GET", `/lots/${encodeURIComponent(lotId)}/gates`, { organizerKey: key() });
      box.gates.replaceChildren(...gates.map((gate) => gateRow(lotId, gate, box)));
      box.noGates.classList.toggle("hidden", gates.length > 0);
    } catch (problem) { showError(box.error, problem); }
  }

  async function loadOccupancy(lotId, box) {
    try {
      const lot = await api("GET", `/lots/${encodeURIComponent(lotId)}`);
      box.about.textContent = [lot.city, fill(T.hourly + ": {price}", { price: money(lot.tariff.hourly) }), lot.timezone,
        count(T.occupiedOf, lot.occupied)].filter(Boolean).join(" · ");
      box.occupancy.replaceChildren(...TYPES.filter((type) => lot.counts[type].total > 0).map((type) => {
        const c = lot.counts[type];
        return el("tr", { "data-type": type }, el("th", { scope: "row", text: T[type] }),
          ...["total", "available", "held", "reserved", "occupied"].map((k) => el("td", { "data-label": T[k], text: c[k] })));
      }));
    } catch (problem) { showError(box.error, problem); }
  }

  function lotCard(offering) {
    const lotId = offering.event_id;
    const box = {
      about: el("p", { class: "muted" }),
      published: el("span", { class: "muted" }),
      occupancy: el("tbody", {}),
      gates: el("tbody", {}),
      noGates: el("p", { class: "muted", text: T.noGates }),
      notice: el("p", { class: "notice hidden", "aria-live": "polite" }),
      error: el("p", { class: "error hidden", role: "alert" }),
    };
    const name = el("input", { required: true, maxlength: "100" });
    const form = el("form", { class: "row" }, field(T.gateName, name), el("button", { type: "submit", text: T.addGate }));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      showError(box.error, null);
      if (!needKey(box.error)) return;
      try {
        showKey(box, await api("POST", `/lots/${encodeURIComponent(lotId)}/gates`, { body: { name: name.value.trim() }, organizerKey: key() }));
        name.value = "";
      } catch (problem) { showError(box.error, problem); }
    });
    const headingId = `lot-${lotId}`;
    const card = el("article", { class: "card", "data-lot": lotId, "aria-labelledby": headingId },
      el("h3", { id: headingId }, offering.name, " ", box.published),
      box.about,
      el("table", { "aria-label": `${T.occupancy}: ${offering.name}` },
        el("caption", { class: "muted", text: T.occupancy }),
        el("thead", {}, el("tr", {}, ...["type", "total", "available", "held", "reserved", "occupied"].map((k) => el("th", { scope: "col", text: T[k] })))),
        box.occupancy),
      el("h4", { text: T.gates }),
      box.noGates,
      el("table", { "aria-label": `${T.gates}: ${offering.name}` }, box.gates),
      form, box.notice, box.error,
      el("p", {}, el("a", { href: `lot.html?lot_id=${encodeURIComponent(lotId)}`, text: T.lotPage })));
    card.box = box;
    loadGates(lotId, box);
    return card;
  }

  // ------------------------------------------------------------------------- lots section
  const cards = new Map();   // lot id -> card
  let list, empty, listError;

  async function refreshLots() {
    if (!key()) return;
    let offerings;
    try {
      offerings = (await api("GET", "/admin/sales", { organizerKey: key() })).offerings;
      showError(listError, null);
    } catch (problem) { showError(listError, problem); return; }
    const lots = offerings.filter((o) => o.inventory === "parking_spaces");
    for (const lot of lots) {
      lotNames.set(lot.event_id, lot.name);
      if (!cards.has(lot.event_id)) {
        const card = lotCard(lot);
        cards.set(lot.event_id, card);
        list.append(card);
      }
      const { box } = cards.get(lot.event_id);
      box.published.textContent = `(${lot.published ? T.published : T.draft})`;   // published after the card was drawn
      loadOccupancy(lot.event_id, box);
    }
    empty.classList.toggle("hidden", cards.size > 0);
  }

  HoldfastOperator.section({
    id: "lots", page: "lots", scope: ["events:write", "parking"], order: 30, title: { en: T.lots, ru: T.lots }, every: 3000,
    build(card) {
      const spaces = Object.fromEntries(TYPES.map((type) => [type,
        el("input", { type: "number", min: "0", max: "500", value: type === "REGULAR" ? "10" : "0", name: `spaces-${type}` })]));
      const result = el("p", { id: "lot-result", class: "notice hidden", "aria-live": "polite" });
      const error = el("p", { id: "lot-error", class: "error hidden", role: "alert" });
      const form = el("form", { id: "create-lot" },
        el("div", { class: "row" },
          field(T.name, el("input", { name: "name", required: true, maxlength: "200" })),
          field(T.city, el("input", { name: "city", maxlength: "100" })),
          field(T.timezone, el("input", { name: "timezone", value: "Europe/Moscow", required: true }))),
        el("div", { class: "row" }, ...TYPES.map((type) => field(fill(T.spacesOf, { type: T[type] }), spaces[type]))),
        el("div", { class: "row" },
          field(T.hourly, el("input", { name: "hourly", type: "number", min: "0.01", step: "0.01", value: "150.00", required: true })),
          field(T.currency, el("input", { name: "currency", value: "RUB", maxlength: "3", size: "4", required: true })),
          field(T.cap, el("input", { name: "cap", type: "number", min: "0.01", step: "0.01" })),
          field(T.grace, el("input", { name: "grace", type: "number", min: "0", max: "120", value: "10" })),
          el("label", { class: "check" }, el("input", { name: "publish", type: "checkbox", checked: true }), T.publish),
          el("button", { type: "submit", text: T.create })));
      let idempotency = null;   // one key per filled-in form: a retried press never makes a second lot
      form.addEventListener("input", () => { idempotency = null; });
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        showError(error, null);
        result.classList.add("hidden");
        if (!needKey(error)) return;
        const data = new FormData(form);
        const currency = String(data.get("currency")).toUpperCase();
        const list = TYPES.flatMap((type) => Array.from({ length: Number(spaces[type].value) || 0 },
          (_, i) => ({ space_id: `${PREFIX[type]}${i + 1}`, type })));
        if (!list.length) { showError(error, T.noSpaces); return; }
        const body = { name: data.get("name"), timezone: data.get("timezone"), spaces: list,
          tariff: { hourly: { value: Number(data.get("hourly")).toFixed(2), currency },
                    grace_minutes: Number(data.get("grace")) || 0 } };
        if (data.get("city")) body.city = data.get("city");
        if (data.get("cap")) body.tariff.daily_cap = { value: Number(data.get("cap")).toFixed(2), currency };
        idempotency = idempotency || newKey();
        try {
          const lot = await api("POST", "/lots", { body, key: idempotency, organizerKey: key() });
          if (data.get("publish")) await api("POST", `/lots/${encodeURIComponent(lot.lot_id)}/publish`, { organizerKey: key() });
          result.textContent = fill(T.created, { name: lot.name, spaces: count(T.spacesCount, lot.spaces.length),
                                                 published: data.get("publish") ? T.andPublished : T.notPublished });
          result.classList.remove("hidden");
          refreshLots();
        } catch (problem) { showError(error, problem); }
      });
      empty = el("p", { class: "muted", text: T.none });
      list = el("div", { id: "lots" });
      listError = el("p", { class: "error hidden", role: "alert" });
      card.append(el("h3", { text: T.newLot }), form, result, error, listError, empty, list);
    },
    refresh: refreshLots,
  });

  // ------------------------------------------------------------------------- gate cases
  const shownCases = new Map();
  let caseList, noCases, caseError;

  function caseCard(gateCase) {
    const failure = el("p", { class: "error hidden", role: "alert" });
    const result = el("p", { class: "notice hidden", "aria-live": "polite" });
    const type = gateCase.case_type || "entry";
    const choice = el("select", { "aria-label": T.resolution }, ...(RESOLUTIONS[type] || []).map((r) => el("option", { value: r, text: T[r] || r })));
    const note = el("textarea", { rows: "2", cols: "40", "aria-label": T.note, placeholder: T.why });
    const journal = el("div", {});
    const facts = [
      gateCase.plate ? fill(T.plate, { plate: gateCase.plate }) : null,
      fill(T.lotOf, { lot: lotNames.get(gateCase.lot_id) || gateCase.lot_id }),
      gateCase.amount_due ? fill(T.due, { amount: money(gateCase.amount_due) }) : null,
      gateCase.unpaid ? fill(T.unpaid, { amount: money(gateCase.unpaid) }) : null,
      gateCase.amount ? fill(T.paid, { amount: money(gateCase.amount) }) : null,
      fill(T.opened, { when: when(gateCase.opened_at) }),
    ].filter(Boolean).join(" · ");
    const showJournal = async (entries) => journal.replaceChildren(await journalList(entries || []));
    const button = el("button", { type: "button", text: T.resolve });
    const controls = el("div", { class: "row" }, el("label", {}, T.resolution, choice), el("label", {}, T.note, note), button);
    const card = el("article", { class: "card review", "data-case": gateCase.case_id, "data-status": gateCase.status },
      el("h3", { text: T[`case_${type}`] || type }),
      el("p", {}, el("span", { lang: "en", text: gateCase.reason.replace(/_/g, " ") }), ". ", facts),
      el("details", {}, el("summary", { text: HoldfastOperator.T.journal }), journal),
      controls, failure, result);
    HoldfastOperator.resolveCase(button, { path: `/admin/gate-cases/${encodeURIComponent(gateCase.case_id)}/resolve`,
                                           choice, note, failure, result, controls, card, showJournal, words: T });
    showJournal(gateCase.journal);
    return card;
  }

  HoldfastOperator.section({
    id: "gate-cases", page: "lots", scope: "parking", order: 40, title: { en: T.cases, ru: T.cases }, every: 3000,
    build(card) {
      noCases = el("p", { class: "muted", text: T.noCases });
      caseList = el("div", { id: "gate-cases" });
      caseError = el("p", { class: "error hidden", role: "alert" });
      card.append(caseError, noCases, caseList);
    },
    async refresh() {
      if (!key()) return;
      try {
        const { gate_cases: cases } = await api("GET", "/admin/reviews", { organizerKey: key() });
        showError(caseError, null);
        for (const gateCase of cases || []) {
          if (!shownCases.has(gateCase.case_id)) {
            const card = caseCard(gateCase);
            shownCases.set(gateCase.case_id, card);
            caseList.append(card);
          }
        }
        // a resolved case stays on screen with its resolution until the next visit
        noCases.classList.toggle("hidden", shownCases.size > 0);
      } catch (problem) { showError(caseError, problem); }
    },
  });
})();
