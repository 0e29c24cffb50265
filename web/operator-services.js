"use strict";
// The operator page's appointment section (registered with HoldfastOperator, operator.js): new
// resources (POST /resources, listed by GET /resources) and services on them (POST /services, publish), and a day view of
// what holds each resource (GET /resources/{id}/day), on the resource's own clock.
(() => {
  const { api, el, showError, newKey, words, fill, lang } = Holdfast;
  const { key, needKey, count } = HoldfastOperator;
  const T = words({
    en: {
      title: "Appointments", newResource: "New resource", newService: "New service", dayView: "A resource's day",
      name: "Name", timezone: "Time zone", opens: "Opens", closes: "Closes", createResource: "Create resource",
      city: "City", mode: "Kind", group: "Group session (seats)", private: "Private (the whole resource)",
      capacity: "Seats per session", duration: "Minutes", step: "Starts every, minutes", price: "Price", currency: "Currency",
      resources: "On resources", publish: "Publish now", createService: "Create service", noResources: "Create a resource first.",
      pickResource: "Tick at least one resource.", resourceMade: "Created the resource \"{name}\".",
      serviceMade: "Created \"{name}\"{published}.", andPublished: " and published it", notPublished: " (not published yet)",
      resource: "Resource", day: "Day", show: "Show", time: "Time", what: "What", held: "Held", sold: "Sold",
      free: "Nothing booked on this day.", session: "Group session: {service}", booking: "Private booking {id}",
      zone: "{name}: times on its clock, {zone}", servicePage: "Service page",
      seats: { one: "{count} seat", other: "{count} seats" },
    },
    ru: {
      title: "Записи", newResource: "Новый ресурс", newService: "Новая услуга", dayView: "День ресурса",
      name: "Название", timezone: "Часовой пояс", opens: "Открывается", closes: "Закрывается", createResource: "Создать ресурс",
      city: "Город", mode: "Вид", group: "Групповое занятие (места)", private: "Индивидуально (весь ресурс)",
      capacity: "Мест на занятии", duration: "Минут", step: "Начало каждые, минут", price: "Цена", currency: "Валюта",
      resources: "На ресурсах", publish: "Опубликовать сразу", createService: "Создать услугу", noResources: "Сначала создайте ресурс.",
      pickResource: "Отметьте хотя бы один ресурс.", resourceMade: "Ресурс «{name}» создан.",
      serviceMade: "Создана «{name}»{published}.", andPublished: ", опубликована", notPublished: " (ещё не опубликована)",
      resource: "Ресурс", day: "День", show: "Показать", time: "Время", what: "Что", held: "В брони", sold: "Продано",
      free: "На этот день ничего не забронировано.", session: "Групповое занятие: {service}", booking: "Индивидуальная бронь {id}",
      zone: "{name}: время по его часам, {zone}", servicePage: "Страница услуги",
      seats: { one: "{count} место", few: "{count} места", many: "{count} мест", other: "{count} места" },
    },
  });
  const serviceNames = new Map();

  // the organizer's own resources (GET /resources), read again on every refresh
  let resources = [];
  function known() { return resources; }
  function remember(resource) {
    resources = [...resources.filter((r) => r.resource_id !== resource.resource_id), resource];
    drawResources();
  }
  async function loadResources() {
    try { resources = (await api("GET", "/resources", { organizerKey: key() })).resources; } catch (_) { return; }
    drawResources();
  }

  function field(label, input, attrs = {}) { return el("label", attrs, label, " ", input); }
  function today() {
    const now = new Date();
    return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
  }

  let picks, dayResource;   // the service form's resource boxes; the day view's resource choice
  let dayBox = null;
  function drawResources() {
    const resources = known();
    const ticked = new Set([...picks.querySelectorAll("input[name=resource]:checked")].map((box) => box.value));
    picks.replaceChildren(...(resources.length ? resources.map((r) => el("label", { class: "check" },
      el("input", { type: "checkbox", value: r.resource_id, name: "resource", checked: ticked.has(r.resource_id) }), r.name)) : [el("span", { class: "muted", text: T.noResources })]));
    const chosen = dayResource.value;
    dayResource.replaceChildren(...resources.map((r) => el("option", { value: r.resource_id, text: r.name, selected: r.resource_id === chosen })));
  }

  async function showDay(box) {
    showError(box.error, null);
    if (!needKey(box.error)) return;
    if (!dayResource.value) await loadResources();   // a page just opened: its resources not read yet
    if (!dayResource.value) return;
    try {
      const day = await api("GET", `/resources/${encodeURIComponent(dayResource.value)}/day?date=${encodeURIComponent(box.date.value)}`,
        { organizerKey: key() });
      const zone = day.resource.timezone;
      const clock = new Intl.DateTimeFormat(lang(), { hour: "2-digit", minute: "2-digit", timeZone: zone });
      box.about.textContent = fill(T.zone, { name: day.resource.name, zone });
      box.rows.replaceChildren(...day.times.map((run) => el("tr", { "data-start": run.starts_at },
        el("td", { "data-label": T.time, text: `${clock.format(new Date(run.starts_at))}–${clock.format(new Date(run.ends_at))}` }),
        el("td", { "data-label": T.what }, run.mode === "group"
          ? fill(T.session, { service: serviceNames.get(run.service_id) || run.service_id })
          : fill(T.booking, { id: run.booking_id })),
        el("td", { "data-label": T.held, text: count(T.seats, run.held) }),
        el("td", { "data-label": T.sold, text: count(T.seats, run.sold) }))));
      box.free.classList.toggle("hidden", day.times.length > 0);
      box.table.classList.toggle("hidden", day.times.length === 0);
    } catch (problem) { showError(box.error, problem); }
  }

  HoldfastOperator.section({
    id: "appointments", page: "services", scope: "events:write", order: 50, title: { en: T.title, ru: T.title }, every: 5000,
    build(card) {
      // -------------------------------------------------------------- a resource
      const resourceResult = el("p", { class: "notice hidden", "aria-live": "polite" });
      const resourceError = el("p", { class: "error hidden", role: "alert" });
      const resourceForm = el("form", { id: "create-resource", class: "row" },
        field(T.name, el("input", { name: "name", required: true, maxlength: "200" })),
        field(T.timezone, el("input", { name: "timezone", value: "Europe/Moscow", required: true })),
        field(T.opens, el("input", { name: "open", type: "time", step: "900", value: "09:00", required: true })),
        field(T.closes, el("input", { name: "close", type: "time", step: "900", value: "21:00", required: true })),
        el("button", { type: "submit", text: T.createResource }));
      let resourceKey = null;
      resourceForm.addEventListener("input", () => { resourceKey = null; });
      resourceForm.addEventListener("submit", async (e) => {
        e.preventDefault();
        showError(resourceError, null);
        resourceResult.classList.add("hidden");
        if (!needKey(resourceError)) return;
        const data = new FormData(resourceForm);
        resourceKey = resourceKey || newKey();
        try {
          const resource = await api("POST", "/resources", { key: resourceKey, organizerKey: key(), body: {
            name: data.get("name"), timezone: data.get("timezone"),
            opening_hours: { open: data.get("open"), close: data.get("close") } } });
          remember(resource);
          resourceResult.textContent = fill(T.resourceMade, { name: resource.name });
          resourceResult.classList.remove("hidden");
        } catch (problem) { showError(resourceError, problem); }
      });

      // -------------------------------------------------------------- a service
      picks = el("div", { class: "row", role: "group", "aria-label": T.resources });
      const capacity = field(T.capacity, el("input", { name: "capacity", type: "number", min: "1", value: "8" }));
      const mode = el("select", { name: "mode" }, el("option", { value: "group", text: T.group }),
        el("option", { value: "private", text: T.private }));
      mode.addEventListener("change", () => capacity.classList.toggle("hidden", mode.value !== "group"));
      const serviceResult = el("p", { class: "notice hidden", "aria-live": "polite" });
      const serviceError = el("p", { class: "error hidden", role: "alert" });
      const serviceForm = el("form", { id: "create-service" },
        el("div", { class: "row" },
          field(T.name, el("input", { name: "name", required: true, maxlength: "200" })),
          field(T.city, el("input", { name: "city", maxlength: "100" })), field(T.mode, mode), capacity),
        el("div", { class: "row" },
          field(T.duration, el("input", { name: "duration", type: "number", min: "15", step: "15", value: "60", required: true })),
          field(T.step, el("input", { name: "step", type: "number", min: "15", step: "15" })),
          field(T.price, el("input", { name: "price", type: "number", min: "0.01", step: "0.01", value: "1000.00", required: true })),
          field(T.currency, el("input", { name: "currency", value: "RUB", maxlength: "3", size: "4", required: true }))),
        el("p", {}, el("span", { class: "muted", text: T.resources }), picks),
        el("div", { class: "row" },
          el("label", { class: "check" }, el("input", { name: "publish", type: "checkbox", checked: true }), T.publish),
          el("button", { type: "submit", text: T.createService })));
      let serviceKey = null;
      serviceForm.addEventListener("input", () => { serviceKey = null; });
      serviceForm.addEventListener("submit", async (e) => {
        e.preventDefault();
        showError(serviceError, null);
        serviceResult.classList.add("hidden");
        if (!needKey(serviceError)) return;
        const data = new FormData(serviceForm);
        const resourceIds = data.getAll("resource");
        if (!resourceIds.length) { showError(serviceError, T.pickResource); return; }
        const body = { name: data.get("name"), mode: data.get("mode"), duration_minutes: Number(data.get("duration")),
          resource_ids: resourceIds, price: { value: Number(data.get("price")).toFixed(2), currency: String(data.get("currency")).toUpperCase() } };
        if (body.mode === "group") body.capacity = Number(data.get("capacity"));
        if (data.get("step")) body.step_minutes = Number(data.get("step"));
        if (data.get("city")) body.city = data.get("city");
        serviceKey = serviceKey || newKey();
        try {
          const service = await api("POST", "/services", { body, key: serviceKey, organizerKey: key() });
          if (data.get("publish")) await api("POST", `/services/${encodeURIComponent(service.service_id)}/publish`, { organizerKey: key() });
          serviceNames.set(service.service_id, service.name);
          serviceResult.replaceChildren(fill(T.serviceMade, { name: service.name, published: data.get("publish") ? T.andPublished : T.notPublished }), " ",
            el("a", { href: `service.html?id=${encodeURIComponent(service.service_id)}`, text: T.servicePage }));
          serviceResult.classList.remove("hidden");
        } catch (problem) { showError(serviceError, problem); }
      });

      // -------------------------------------------------------------- a resource's day
      dayResource = el("select", { name: "resource" });
      const box = {
        date: el("input", { type: "date", value: today(), required: true }),
        about: el("p", { class: "muted", "aria-live": "polite" }),
        rows: el("tbody", {}),
        free: el("p", { class: "muted hidden", text: T.free }),
        error: el("p", { class: "error hidden", role: "alert" }),
      };
      box.table = el("table", { id: "resource-day", class: "hidden" },
        el("thead", {}, el("tr", {}, [T.time, T.what, T.held, T.sold].map((h) => el("th", { scope: "col", text: h })))), box.rows);
      const dayForm = el("form", { id: "day-form", class: "row" }, field(T.resource, dayResource), field(T.day, box.date),
        el("button", { type: "submit", class: "secondary", text: T.show }));
      dayForm.addEventListener("submit", (e) => { e.preventDefault(); showDay(box); });
      dayBox = box;

      card.append(el("h3", { text: T.newResource }), resourceForm, resourceResult, resourceError,
        el("h3", { text: T.newService }), serviceForm, serviceResult, serviceError,
        el("h3", { text: T.dayView }), dayForm, box.about, box.free, box.table, box.error);
      drawResources();
    },
    async refresh() {
      // the day view names a group session by its service
      if (!key()) return;
      await loadResources();
      let offerings = [];
      try { offerings = (await api("GET", "/admin/sales", { organizerKey: key() })).offerings; } catch (_) { return; }
      for (const service of offerings.filter((o) => o.inventory === "appointment_slots")) {
        serviceNames.set(service.event_id, service.name);
      }
      if (dayBox && dayBox.rows.childElementCount) showDay(dayBox);   // a shown day stays current
    },
  });
})();
