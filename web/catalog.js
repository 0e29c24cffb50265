"use strict";
// The catalog: the three public listings side by side (GET /events, GET /services, GET /lots),
// each a page at a time, in the reader's language (dates, money, units and plurals by Intl).
(() => {
  const { api, el, showError, money, when, lang, words, fill } = Holdfast;
  const form = document.getElementById("filters");
  const T = words({
    en: {
      title: "Catalog", words: "Words", city: "City", category: "Category (events)", from: "From (events)",
      to: "To (events)", search: "Search", events: "Events", services: "Appointments", lots: "Parking",
      noEvents: "No events match.", noServices: "No services match.", noLots: "No parking lots match.",
      moreEvents: "More events", moreServices: "More services", moreLots: "More parking",
      lotsHow: "Parking is found by city only.",
      group: "group session", private: "the whole place for you", hourly: "{price} an hour",
      COMPACT: "compact", REGULAR: "regular", LARGE: "large", HANDICAP: "accessible",
      spaces: { one: "{count} space", other: "{count} spaces" },
      pageTitle: "Holdfast: catalog",
    },
    ru: {
      title: "Каталог", words: "Слова", city: "Город", category: "Категория (мероприятия)", from: "С (мероприятия)",
      to: "По (мероприятия)", search: "Найти", events: "Мероприятия", services: "Запись на услуги", lots: "Парковки",
      noEvents: "Мероприятий не найдено.", noServices: "Услуг не найдено.", noLots: "Парковок не найдено.",
      moreEvents: "Ещё мероприятия", moreServices: "Ещё услуги", moreLots: "Ещё парковки",
      lotsHow: "Парковки ищутся только по городу.",
      group: "групповое занятие", private: "место целиком для вас", hourly: "{price} в час",
      COMPACT: "малые", REGULAR: "обычные", LARGE: "большие", HANDICAP: "для людей с инвалидностью",
      spaces: { one: "{count} место", few: "{count} места", many: "{count} мест", other: "{count} места" },
      pageTitle: "Holdfast: каталог",
    },
  });
  const plural = new Intl.PluralRules(lang());
  const minutes = new Intl.NumberFormat(lang(), { style: "unit", unit: "minute", unitDisplay: "long" });
  const count = (forms, n) => fill(forms[plural.select(n)] || forms.other, { count: n });

  document.title = T.pageTitle;
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];

  function filters() {
    const values = {};
    for (const [name, value] of new FormData(form)) if (value.trim()) values[name] = value.trim();
    return values;
  }

  // One listing: its path and the filters it takes, how an item reads, and its paging.
  function shelf(name, path, accepts, item) {
    const list = document.getElementById(name);
    const more = document.getElementById(`${name}-more`);
    const empty = document.getElementById(`${name}-empty`);
    let cursor = null;
    let latest = 0;     // a search started while another was loading: only the latest is shown

    async function load(append) {
      const mine = ++latest;
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(filters())) {
        if (!accepts.includes(key)) continue;
        // dates are whole days: "to" includes the day it names
        params.set(key, key === "from" ? `${value}T00:00:00Z` : key === "to" ? `${value}T23:59:59Z` : value);
      }
      params.set("limit", "10");
      if (append && cursor) params.set("cursor", cursor);
      const page = await api("GET", `${path}?${params}`);
      if (mine !== latest) return;
      if (!append) list.replaceChildren();
      for (const found of page[name]) list.append(el("li", {}, item(found)));
      cursor = page.next_cursor || null;
      more.classList.toggle("hidden", !cursor);
      empty.classList.toggle("hidden", list.children.length > 0);
    }

    more.addEventListener("click", () => load(true).catch((error) => showError("error", error)));
    return load;
  }

  const SPACE_TYPES = ["COMPACT", "REGULAR", "LARGE", "HANDICAP"];
  const place = (...parts) => parts.filter(Boolean).join(", ");

  const shelves = [
    shelf("events", "/events", ["q", "city", "category", "from", "to"], (event) =>
      el("a", { href: `event.html?id=${encodeURIComponent(event.event_id)}` },
        el("strong", { text: event.name }), el("br"),
        el("span", { class: "muted", text: `${when(event.starts_at)} · ${place(event.venue, event.city)} · ${event.category} · ${money(event.price)}` }))),
    shelf("services", "/services", ["q", "city"], (service) =>
      el("a", { href: `service.html?id=${encodeURIComponent(service.service_id)}` },
        el("strong", { text: service.name }), el("br"),
        el("span", { class: "muted", text: [service.city, T[service.mode], minutes.format(service.duration_minutes), money(service.price)].filter(Boolean).join(" · ") }))),
    shelf("lots", "/lots", ["city"], (lot) => {
      const total = Object.values(lot.spaces).reduce((a, b) => a + b, 0);
      const kinds = SPACE_TYPES.filter((type) => lot.spaces[type] > 0).map((type) => `${T[type]}: ${lot.spaces[type]}`).join(", ");
      return el("a", { href: `lot.html?lot_id=${encodeURIComponent(lot.lot_id)}` },
        el("strong", { text: lot.name }), el("br"),
        el("span", { class: "muted", text: [lot.city, fill(T.hourly, { price: money(lot.hourly) }), `${count(T.spaces, total)}: ${kinds}`].filter(Boolean).join(" · ") }));
    }),
  ];

  async function loadAll() {
    showError("error", null);
    const outcomes = await Promise.allSettled(shelves.map((load) => load(false)));
    const failed = outcomes.find((outcome) => outcome.status === "rejected");
    if (failed) showError("error", failed.reason);
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); loadAll(); });
  loadAll();
})();
