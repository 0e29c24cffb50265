"use strict";
// A parking lot for a driver: the lot and its tariff, the spaces free now by type, and a
// reservation of a vehicle type for a window, held through POST /lots/{lot_id}/reservations and
// then paid on the booking page like any hold.
(() => {
  const { api, showError, money, param, newKey, lang, words, el, fill } = Holdfast;
  const lotId = param("lot_id");
  const $ = (id) => document.getElementById(id);
  const TYPES = ["COMPACT", "REGULAR", "LARGE", "HANDICAP"];
  const T = words({
    en: {
      freeNow: "Free now", freeOf: "{type}: {free} free of {total}", reserve: "Reserve a space", vehicle: "Vehicle",
      plate: "Plate", from: "From", to: "To", windowHelp: "To the minute (arriving at 10:10 is fine), at most 24 hours, in your own clock; billed for the window itself.",
      permit: "I have a disabled parking permit", hold: "Hold a space",
      COMPACT: "Compact", REGULAR: "Regular", LARGE: "Large", HANDICAP: "Accessible",
      hourly: "{price} an hour", cap: "at most {price} a day", grace: "{minutes} free at the exit",
      zone: "the lot's clock: {zone}", missing: "This page needs a lot: open it from the catalog.",
      badWindow: "Pick a start and an end, the end after the start.",
    },
    ru: {
      freeNow: "Свободно сейчас", freeOf: "{type}: свободно {free} из {total}", reserve: "Забронировать место",
      vehicle: "Машина", plate: "Номер", from: "С", to: "До", windowHelp: "С точностью до минуты (приезд в 10:10 — обычное дело), не больше суток, по вашим часам; оплата за само это время.",
      permit: "У меня есть разрешение на парковку для людей с инвалидностью", hold: "Забронировать",
      COMPACT: "Малая", REGULAR: "Обычная", LARGE: "Большая", HANDICAP: "Для людей с инвалидностью",
      hourly: "{price} в час", cap: "не больше {price} в сутки", grace: "{minutes} бесплатно при выезде",
      zone: "часовой пояс парковки: {zone}", missing: "Откройте эту страницу из каталога: не указана парковка.",
      badWindow: "Укажите начало и конец, конец позже начала.",
    },
  });
  const minutes = new Intl.NumberFormat(lang(), { style: "unit", unit: "minute", unitDisplay: "long" });
  const captcha = Holdfast.challenge($("captcha"));
  let key = null;    // one Idempotency-Key per choice: a retried click never makes a second hold

  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];

  // datetime-local speaks the reader's clock without a zone: "YYYY-MM-DDTHH:MM"
  function local(date) {
    const pad = (n) => String(n).padStart(2, "0");
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
  }

  function defaultWindow() {
    const start = new Date();
    // the next quarter hour: any minute is fine, this is only a starting point
    start.setSeconds(0, 0);
    start.setMinutes(start.getMinutes() + 15 - start.getMinutes() % 15);
    $("from").value = local(start);
    $("to").value = local(new Date(start.getTime() + 2 * 3600 * 1000));
  }

  function render(lot) {
    $("name").textContent = lot.name;
    document.title = `Holdfast: ${lot.name}`;
    const tariff = lot.tariff;
    $("about").textContent = [lot.city, fill(T.hourly, { price: money(tariff.hourly) }),
      tariff.daily_cap ? fill(T.cap, { price: money(tariff.daily_cap) }) : null,
      tariff.grace_minutes ? fill(T.grace, { minutes: minutes.format(tariff.grace_minutes) }) : null,
      fill(T.zone, { zone: lot.timezone })].filter(Boolean).join(" · ");
    $("free").replaceChildren(...TYPES.filter((type) => lot.counts[type].total > 0).map((type) =>
      el("li", { "data-type": type, text: fill(T.freeOf, {
        type: T[type], free: lot.counts[type].available, total: lot.counts[type].total }) })));
  }

  async function load() {
    try {
      const lot = await api("GET", `/lots/${encodeURIComponent(lotId)}`);
      render(lot);
      captcha.need(lot);
      showError("error", null);
    } catch (error) { showError("error", error); }
  }

  $("reserve-form").addEventListener("input", () => { key = null; });
  $("reserve-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    showError("reserve-error", null);
    const from = new Date($("from").value), to = new Date($("to").value);
    if (isNaN(from) || isNaN(to) || to <= from) { showError("reserve-error", T.badWindow); return; }
    key = key || newKey();
    $("reserve").disabled = true;
    try {
      const booking = await api("POST", `/lots/${encodeURIComponent(lotId)}/reservations`, {
        key, body: { vehicle_type: $("vehicle").value, plate: $("plate").value.trim(), from: from.toISOString(),
                     to: to.toISOString(), handicap_permit: $("permit").checked },
        headers: captcha.headers(),
      });
      location.assign(`booking.html?id=${encodeURIComponent(booking.booking_id)}`);
    } catch (error) {
      showError("reserve-error", error);
      captcha.reset();   // a token is good once
      load();
    } finally { $("reserve").disabled = false; }
  });

  if (!lotId) showError("error", T.missing);
  else { defaultWindow(); load(); }
})();
