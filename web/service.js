"use strict";
(() => {
  const { api, el, showError, money, param, newKey, words, fill, lang } = Holdfast;
  const T = words({
    en: {
      free: "Free", taken: "Taken", seatsLeft: { one: "{count} seat left", other: "{count} seats left" }, noSeats: "No seats left",
      group: "A seat in a group session", private: "The whole room for you", aSeat: " a seat", timesIn: "times in {zones}",
      to: "to {time}", room: "Room {id}", pickTime: "Pick a time above.", seats: { one: "{count} seat", other: "{count} seats" },
      missing: "This page needs a service: open it from the link the organizer gave you.",
      typeName: "Type your name at the top of the page first, so the time is held for you.",
      heading: "Book a time", prev: "Previous day", next: "Next day", day: "Day", seatsLabel: "Seats",
      empty: "No times left on this day: try another day.", hold: "Hold", nearby: "Free times nearby:",
    },
    ru: {
      free: "Свободно", taken: "Занято", seatsLeft: { one: "осталось {count} место", few: "осталось {count} места", many: "осталось {count} мест", other: "осталось {count} места" },
      noSeats: "Мест нет", group: "Место на групповом занятии", private: "Весь зал только для вас", aSeat: " за место",
      timesIn: "время: {zones}", to: "до {time}", room: "Зал {id}", pickTime: "Выберите время выше.",
      seats: { one: "{count} место", few: "{count} места", many: "{count} мест", other: "{count} места" },
      missing: "Откройте эту страницу по ссылке организатора: не указана услуга.",
      typeName: "Сначала введите своё имя вверху страницы, чтобы время забронировали за вами.",
      heading: "Запись на время", prev: "Предыдущий день", next: "Следующий день", day: "День", seatsLabel: "Мест",
      empty: "На этот день свободного времени нет: выберите другой день.", hold: "Забронировать", nearby: "Свободное время рядом:",
    },
  });
  const plurals = new Intl.PluralRules(lang());
  const count = (forms, n) => fill(forms[plurals.select(n)] || forms.other, { count: n });
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];
  for (const node of document.querySelectorAll("[data-label]")) node.setAttribute("aria-label", T[node.dataset.label]);
  const serviceId = param("id");
  const $ = (id) => document.getElementById(id);
  const captcha = Holdfast.challenge($("captcha"));
  let day = param("date") || today();
  let answer = null;       // the last availability read
  let picked = null;       // {starts_at, resource_id}

  function today() {
    const now = new Date();
    return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
  }

  function shift(text, days) {
    const date = new Date(`${text}T12:00:00Z`);
    date.setUTCDate(date.getUTCDate() + days);
    return date.toISOString().slice(0, 10);
  }

  // The API gives UTC instants; people book on the resource's own wall clock.
  function clock(iso, zone) {
    try {
      return new Date(iso).toLocaleTimeString(lang(), { timeZone: zone, hour: "numeric", minute: "2-digit" });
    } catch (_) { return new Date(iso).toLocaleTimeString(lang(), { hour: "numeric", minute: "2-digit" }); }
  }

  function zoneOf(slot) { return (answer && answer.timezones && answer.timezones[slot.resource_id]) || undefined; }

  function span(slot) { return `${clock(slot.starts_at, zoneOf(slot))}–${clock(slot.ends_at, zoneOf(slot))}`; }

  function seats() { return answer && answer.mode === "group" ? Math.max(1, parseInt($("seats").value, 10) || 1) : 1; }

  function left(slot) {
    if (answer.mode === "private") return slot.available > 0 ? T.free : T.taken;
    return slot.available > 0 ? count(T.seatsLeft, slot.available) : T.noSeats;
  }

  const same = (a, b) => a && b && a.starts_at === b.starts_at && a.resource_id === b.resource_id;

  function render() {
    $("name").textContent = answer.name;
    document.title = `Holdfast: ${answer.name}`;
    const zones = Array.from(new Set(Object.values(answer.timezones || {})));
    const kind = answer.mode === "group" ? T.group : T.private;
    $("about").textContent = `${kind} · ${money(answer.price)}${answer.mode === "group" ? T.aSeat : ""} · ${fill(T.timesIn, { zones: zones.join(", ") })}`;
    $("seats-label").classList.toggle("hidden", answer.mode !== "group");
    $("day").value = answer.date;
    $("day-heading").textContent = new Date(`${answer.date}T12:00:00Z`).toLocaleDateString(lang(),
      { weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });
    const resources = Array.from(new Set(answer.slots.map((s) => s.resource_id)));
    const groups = resources.map((resource) => {
      const buttons = answer.slots.filter((s) => s.resource_id === resource).map((slot) => el("button", {
        type: "button", class: "slot", "data-start": slot.starts_at, "data-resource": slot.resource_id,
        "aria-pressed": same(slot, picked) ? "true" : "false", disabled: slot.available < seats(),
        // named by what it shows (start, end and what is left): a separate label would differ from the visible words
        onclick: () => pick(slot),
      }, el("strong", { text: clock(slot.starts_at, zoneOf(slot)) }),
         el("span", { text: `${fill(T.to, { time: clock(slot.ends_at, zoneOf(slot)) })} · ${left(slot)}` })));
      return el("div", {}, resources.length > 1 ? el("h3", { text: fill(T.room, { id: resource }) }) : null,
                el("div", { class: "slotgrid" }, buttons));
    });
    $("slots").replaceChildren(...groups);
    $("empty").classList.toggle("hidden", answer.slots.length > 0);
    if (picked && !answer.slots.some((s) => same(s, picked) && s.available >= seats())) picked = null;
    describePick();
  }

  function describePick() {
    const slot = picked && answer.slots.find((s) => same(s, picked));
    $("hold").disabled = !slot;
    $("picked").textContent = slot
      ? `${$("day-heading").textContent}, ${span(slot)}${answer.mode === "group" ? ` · ${count(T.seats, seats())}` : ""}`
      : T.pickTime;
  }

  function pick(slot) {
    picked = { starts_at: slot.starts_at, resource_id: slot.resource_id };
    showError("hold-error", null);
    $("nearby").classList.add("hidden");
    render();
  }

  async function load() {
    if (!serviceId) { showError("error", T.missing); return; }
    const asked = day;
    try {
      const read = await api("GET", `/services/${encodeURIComponent(serviceId)}/availability?date=${encodeURIComponent(asked)}`);
      // a slow answer for a day the customer has already left must not replace the new day's
      if (asked !== day) return;
      answer = read;
      captcha.need(read);
      showError("error", null);
      render();
    } catch (error) { if (asked === day) showError("error", error); }
  }

  // Read on arrival, on each day change and after a refused hold; not polled, so a time the
  // customer is looking at never vanishes under the pointer (a taken one answers with nearby times).
  function watch() { load(); }

  function go(text) {
    if (!/^\d{4}-\d\d-\d\d$/.test(text || "")) return;
    day = text;
    picked = null;
    $("nearby").classList.add("hidden");
    showError("hold-error", null);
    history.replaceState(null, "", `?id=${encodeURIComponent(serviceId)}&date=${day}`);
    watch();
  }

  function offerNearby(slots) {
    const free = (slots || []).filter((s) => s.available >= seats());
    $("nearby-times").replaceChildren(...free.map((slot) => el("button", {
      type: "button", class: "secondary", text: span(slot),
      onclick: () => { pick(slot); $("hold").focus(); },
    })));
    $("nearby").classList.toggle("hidden", free.length === 0);
  }

  $("hold").addEventListener("click", async () => {
    if (!picked) return;
    showError("hold-error", null);
    if (Holdfast.config.identity === "header" && !Holdfast.customer()) {
      showError("hold-error", T.typeName);
      return;
    }
    const body = { starts_at: picked.starts_at, resource_id: picked.resource_id };
    if (answer.mode === "group") body.quantity = seats();
    // one key per choice in this tab: a retry after an unanswered call never holds a second time
    const keyName = `holdfast.slot.${serviceId}.${Holdfast.customer()}.${JSON.stringify(body)}`;
    const key = sessionStorage.getItem(keyName) || newKey();
    sessionStorage.setItem(keyName, key);
    $("hold").disabled = true;
    try {
      const booking = await api("POST", `/services/${encodeURIComponent(serviceId)}/bookings`,
                                { body, key, headers: captcha.headers() });
      Holdfast.rememberBooking(serviceId, booking.booking_id);
      location.href = `booking.html?id=${encodeURIComponent(booking.booking_id)}`;
    } catch (error) {
      showError("hold-error", error);
      captcha.reset();   // a token is good once
      if (error.code === "slot_unavailable") {
        sessionStorage.removeItem(keyName);
        offerNearby(error.details && error.details.nearby);
        picked = null;
        load();
      }
      $("hold").disabled = !picked;
    }
  });

  $("prev").addEventListener("click", () => go(shift(day, -1)));
  $("next").addEventListener("click", () => go(shift(day, 1)));
  $("day").addEventListener("change", () => go($("day").value));
  $("day-form").addEventListener("submit", (e) => { e.preventDefault(); go($("day").value); });
  $("seats").addEventListener("input", () => { if (answer) render(); });
  watch();
})();
