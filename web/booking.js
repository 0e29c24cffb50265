"use strict";
(() => {
  const { api, el, showError, money, when, param, newKey, every, fill, texts } = Holdfast;
  const bookingId = param("id");
  const $ = (id) => document.getElementById(id);
  // The page's own words; the explanation under each heading is the API's customer-facing text
  // (the journal's decision and, in review, review.next_step) in the same language.
  const T = Holdfast.words({
    en: {
      title: "Your booking", loading: "Loading…", heldFor: "Your places are held for", otherTimes: "Other times you can have",
      moneyBack: "Give me my money back", booked: "What you booked", places: "Places", amount: "Amount", payment: "Payment",
      booking: "Booking", pass: "Entry pass", tickets: "Tickets",
      ticketsHow: "Show one code per person at the door; each lets one person in, once.",
      ticketSeat: "Seat {seat}", ticketNumber: "Ticket {n}", ticketAlt: "{label}: a QR code for the door", passHow: "Show this code to the gate's camera.",
      passAlt: "Entry pass: a QR code for the gate", happened: "What happened", pageTitle: "Holdfast: your booking",
      HELD: "Held for you: pay to keep your places", PAYMENT_PENDING: "Waiting for your payment",
      CONFIRMED: "Paid and confirmed", EXPIRED: "Your hold ran out: nothing was charged", CANCELLED: "Cancelled",
      PAYMENT_FAILED: "The payment did not go through: nothing was charged", REFUND_PENDING: "Your money is being refunded",
      REFUNDED: "Refunded", MANUAL_REVIEW: "Our team is checking your booking",
      CHECKED_IN: "Your car is in", COMPLETED: "Your car has left", NO_SHOW: "Nobody came in the window",
      CANCELLED_NO_REFUND: "Cancelled, nothing given back",
      seats: "Seats {seats}", timeTo: "{from} to {to}", groupSeats: { one: ", {count} seat", other: ", {count} seats" },
      placesCount: { one: "{count} place", other: "{count} places" },
      space: "Space {space}", spaceFor: "Space {space} for {plate}",
      notStarted: "Not started", pending: "Started, not paid yet", waiting_for_capture: "Authorised", succeeded: "Paid",
      canceled: "Cancelled, nothing charged", beingChecked: "Being checked",
      backTimes: "Back to the times", backParking: "Back to the parking", backEvent: "Back to the event",
      continuePay: "Continue to payment", pay: "Pay", cancelRefund: "Cancel and get a refund", cancelKeep: "Cancel the booking",
      giveUp: "Give the places up", discounted: "{amount} with code {code} (was {full})",
      refundAmount: "Cancelling now gives back {amount}.", cancelFor: "Cancel and get {amount} back",
      caseHeading: "Your places went to someone else: choose what happens",
      caseTake: "Take one of these instead, with the same payment and nothing more to pay, or have your money back.",
      caseBy: "If you choose nothing by {when}, your money comes back by itself.",
      typeName: "Type your name at the top of the page to see your booking.",
      noProvider: "The payment page could not be opened. Please try again.",
      contactWhy: "A fiscal receipt is e-mailed to you: give the address to send it to, then pay.",
      contactLabel: "E-mail for the receipt", contactPay: "Pay with this address",
      askCancel: "Cancel this booking?", askGiveUp: "Give these places up?",
      noBooking: "This page needs a booking: open it from the event page after holding places.",
      giveHeading: "Give this booking to someone", giveLabel: "Their e-mail", giveSend: "Send the link",
      giveWhy: "We e-mail them a link. Once they accept it the booking is theirs, with new tickets, and yours stop working.",
      givenTo: "Offered: the link was sent and works until {when}. Your tickets work until it is accepted.",
      withdraw: "Take the offer back",
      swapHeading: "Change the date or the places", swapDate: "Date", swapSeats: "Seats (for example A-3, A-4)",
      swapCount: "Places", swapSend: "Change the booking",
      swapWhy: "Your booking moves in one step, or nothing changes. Cheaper places: the difference goes back to the payment you paid with. Dearer ones: you pay the difference, and the booking moves once it is paid. Your tickets are replaced by new ones.",
      swapUntil: "Changes are possible until {when}.", swapDone: "Changed. New tickets are below.",
      swapBack: "Changed. {amount} of the difference goes back to the payment you paid with.",
      swapAsk: "Say which places you want.",
      swapPay: "The new places cost {amount} more. Pay the difference by {when}: until then they are held for you, and your current places and tickets stay yours.",
      swapPayLink: "Pay the difference",
      swapPayLater: "The payment service did not answer. Send the same change again: you will be asked to pay once.",
    },
    ru: {
      tickets: "Билеты", ticketsHow: "Покажите на входе по коду на каждого; каждый пропускает одного человека один раз.",
      ticketSeat: "Место {seat}", ticketNumber: "Билет {n}", ticketAlt: "{label}: QR-код для входа",
      title: "Ваше бронирование", loading: "Загрузка…", heldFor: "Места закреплены за вами ещё", otherTimes: "Другие варианты для вас",
      moneyBack: "Верните мне деньги", booked: "Что забронировано", places: "Места", amount: "Сумма", payment: "Оплата",
      booking: "Бронирование", pass: "Пропуск", passHow: "Покажите этот код камере у въезда.",
      passAlt: "Пропуск: QR-код для въезда", happened: "Что происходило", pageTitle: "Holdfast: ваше бронирование",
      HELD: "Места закреплены: оплатите, чтобы сохранить их", PAYMENT_PENDING: "Ждём вашу оплату",
      CONFIRMED: "Оплачено и подтверждено", EXPIRED: "Время брони вышло: деньги не списаны", CANCELLED: "Отменено",
      PAYMENT_FAILED: "Оплата не прошла: деньги не списаны", REFUND_PENDING: "Деньги возвращаются",
      REFUNDED: "Деньги возвращены", MANUAL_REVIEW: "Мы проверяем ваше бронирование",
      CHECKED_IN: "Машина на парковке", COMPLETED: "Машина уехала", NO_SHOW: "За время брони никто не приехал",
      CANCELLED_NO_REFUND: "Отменено, деньги не возвращены",
      seats: "Места {seats}", timeTo: "{from} — {to}", groupSeats: { one: ", {count} место", few: ", {count} места", many: ", {count} мест", other: ", {count} места" },
      placesCount: { one: "{count} место", few: "{count} места", many: "{count} мест", other: "{count} места" },
      space: "Место {space}", spaceFor: "Место {space} для {plate}",
      notStarted: "Не начата", pending: "Начата, ещё не оплачена", waiting_for_capture: "Деньги заблокированы", succeeded: "Оплачено",
      canceled: "Отменена, деньги не списаны", beingChecked: "Проверяется",
      backTimes: "К расписанию", backParking: "К парковке", backEvent: "К мероприятию",
      continuePay: "Перейти к оплате", pay: "Оплатить", cancelRefund: "Отменить и вернуть деньги", cancelKeep: "Отменить бронирование",
      giveUp: "Отказаться от мест", discounted: "{amount} с кодом {code} (было {full})",
      refundAmount: "При отмене сейчас вернётся {amount}.", cancelFor: "Отменить и вернуть {amount}",
      caseHeading: "Ваши места достались другому: выберите, что дальше",
      caseTake: "Возьмите один из этих вариантов вместо них, с той же оплатой и без доплаты, или верните деньги.",
      caseBy: "Если ничего не выбрать до {when}, деньги вернутся сами.",
      typeName: "Введите своё имя вверху страницы, чтобы увидеть бронирование.",
      noProvider: "Не удалось открыть страницу оплаты. Попробуйте ещё раз.",
      contactWhy: "Кассовый чек придёт на электронную почту: укажите адрес для него и оплатите.",
      contactLabel: "Почта для чека", contactPay: "Оплатить с этим адресом",
      askCancel: "Отменить бронирование?", askGiveUp: "Отказаться от этих мест?",
      noBooking: "Этой странице нужно бронирование: откройте её со страницы мероприятия после брони мест.",
      giveHeading: "Передать бронирование другому", giveLabel: "Его почта", giveSend: "Отправить ссылку",
      giveWhy: "Мы отправим ссылку на эту почту. Когда её примут, бронирование перейдёт к новому владельцу с новыми билетами, а ваши перестанут действовать.",
      givenTo: "Предложено: ссылка отправлена и действует до {when}. Ваши билеты действуют, пока её не примут.",
      withdraw: "Отозвать предложение",
      swapHeading: "Поменять дату или места", swapDate: "Дата", swapSeats: "Места (например, A-3, A-4)",
      swapCount: "Количество мест", swapSend: "Поменять бронирование",
      swapWhy: "Бронирование переносится за один шаг или не меняется вовсе. Если новые места дешевле, разница вернётся на тот платёж, которым вы оплатили. Если дороже, вы доплачиваете разницу, и бронирование переносится после оплаты. Билеты заменяются новыми.",
      swapUntil: "Поменять можно до {when}.", swapDone: "Готово. Новые билеты ниже.",
      swapBack: "Готово. Разница {amount} вернётся на тот платёж, которым вы оплатили.",
      swapAsk: "Укажите, какие места вам нужны.",
      swapPay: "Новые места дороже на {amount}. Оплатите разницу до {when}: до тех пор они держатся за вами, а нынешние места и билеты остаются вашими.",
      swapPayLink: "Оплатить разницу",
      swapPayLater: "Платёжный сервис не ответил. Отправьте ту же замену ещё раз: оплатить попросим один раз.",
    },
  });
  // A count in the reader's language (Intl plural rules pick the form)
  const plurals = new Intl.PluralRules(Holdfast.lang());
  const count = (forms, n) => fill(forms[plurals.select(n)] || forms.other, { count: n });
  const TONES = { HELD: "wait", PAYMENT_PENDING: "wait", CONFIRMED: "good", EXPIRED: "bad", CANCELLED: "bad",
                  PAYMENT_FAILED: "bad", REFUND_PENDING: "wait", REFUNDED: "good", MANUAL_REVIEW: "wait",
                  CHECKED_IN: "good", COMPLETED: "good", NO_SHOW: "bad", CANCELLED_NO_REFUND: "bad" };
  document.title = T.pageTitle;
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];
  for (const node of document.querySelectorAll("[data-label]")) node.setAttribute("aria-label", T[node.dataset.label]);
  for (const node of document.querySelectorAll("[data-alt]")) node.setAttribute("alt", T[node.dataset.alt]);
  const FINAL = new Set(["CONFIRMED", "EXPIRED", "CANCELLED", "PAYMENT_FAILED", "REFUNDED", "COMPLETED", "NO_SHOW",
                         "CANCELLED_NO_REFUND"]);
  let booking = null;
  let ticker = null;
  // What the hold's end means is the API's own sentence (GET /texts), never the page's words
  let said = {};

  // The journal's own words, with its UTC timestamps shown in the reader's time
  function sentence(text) {
    if (!text) return "";
    text = text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, (iso) => when(iso));
    return text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? "" : ".");
  }

  function render() {
    const heading = T[booking.status] || booking.status, tone = TONES[booking.status] || "wait";
    const status = $("status");
    status.textContent = heading;
    status.className = `status ${tone}`;
    status.dataset.status = booking.status;
    const changes = booking.journal.filter((e) => e.from_status !== e.to_status);
    const last = changes[changes.length - 1];
    // the last change: the engine's own record in English, or the customer texts' name of that step
    // for a reader of another language (the journal below shows every step the same way)
    const named = last && Holdfast.lang() !== "en" ? said[`journal.${last.action}`] : "";
    $("explain").textContent = named || (last ? sentence(last.decision) : "");
    $("explain").lang = named ? Holdfast.lang() : "en";
    const next = booking.status === "MANUAL_REVIEW" && booking.review && booking.review.next_step;
    $("next").textContent = next || "";
    $("next").classList.toggle("hidden", !next);

    const slot = booking.places.starts_at;    // an appointment: its time, in the reader's clock
    const space = booking.places.space_id;    // a parking reservation: its space and window
    const places = booking.places.seats ? fill(T.seats, { seats: booking.places.seats.join(", ") })
      // the window as reserved (from, to), not the half-hour granules it claims (places.from, places.to)
      : space ? `${fill(booking.plate ? T.spaceFor : T.space, { space, plate: booking.plate })}, ${fill(T.timeTo, { from: when(booking.from || booking.places.from), to: when(booking.to || booking.places.to) })}`
      : slot ? fill(T.timeTo, { from: when(slot), to: new Date(booking.places.ends_at).toLocaleTimeString(Holdfast.lang(), { hour: "2-digit", minute: "2-digit" }) })
        + (booking.places.mode === "group" ? count(T.groupSeats, booking.places.quantity) : "")
      : count(T.placesCount, booking.places.quantity);
    if (orderLines) {
      $("places").replaceChildren(el("ul", { class: "lines" }, ...orderLines.map((line) =>
        el("li", { "data-line": line.line_id, text: lineText(line) }))));
    } else {
      $("places").textContent = places;
    }
    // a code's discount: the amount before it and after it, both as the engine priced them
    $("amount").textContent = booking.code && booking.code.full_amount
      ? fill(T.discounted, { amount: money(booking.amount), code: booking.code.code, full: money(booking.code.full_amount) })
      : money(booking.amount);
    const payment = booking.payment;
    $("payment").textContent = !payment ? T.notStarted
      : (["pending", "waiting_for_capture", "succeeded", "canceled"].includes(payment.status) ? T[payment.status] : T.beingChecked);
    $("booking-id").textContent = booking.booking_id;
    $("event-link").href = slot
      ? `service.html?id=${encodeURIComponent(booking.event_id)}&date=${booking.places.starts_at.slice(0, 10)}`
      : space ? `lot.html?lot_id=${encodeURIComponent(booking.event_id)}`
      : `event.html?id=${encodeURIComponent(booking.event_id)}`;
    $("event-link").textContent = slot ? T.backTimes : space ? T.backParking : T.backEvent;
    $("event-link").classList.remove("hidden");

    const holding = booking.status === "HELD" || booking.status === "PAYMENT_PENDING";
    $("hold").classList.toggle("hidden", !holding || !booking.hold_expires_at);
    $("after").textContent = holdText("hold_next_step");
    $("pay").classList.toggle("hidden", !holding);
    $("pay").textContent = payment && payment.confirmation_url ? T.continuePay : T.pay;
    $("cancel").classList.toggle("hidden", !(holding || (booking.status === "CONFIRMED" && booking.cancellable !== false)));
    // the exact amount a cancel now gives back (cancel_refund_amount: the policy's share, or all)
    const back = booking.status === "CONFIRMED" && booking.cancel_refund && booking.cancel_refund_amount
      && Number(booking.cancel_refund_amount.value) > 0 ? booking.cancel_refund_amount : null;
    $("cancel").textContent = booking.status !== "CONFIRMED" ? T.giveUp
      : back ? fill(T.cancelFor, { amount: money(back) }) : booking.cancel_refund ? T.cancelRefund : T.cancelKeep;
    // what cancelling gives back is the engine's own decision for this booking (cancel_refund);
    // its sentence names the amount when only a part comes back (cancel.refund_part), else the
    // page adds it
    const part = (booking.texts || {}).cancel === "cancel.refund_part";
    $("cancel-terms").textContent = booking.status === "CONFIRMED"
      ? [cancelText(), back && !part ? fill(T.refundAmount, { amount: money(back) }) : ""].filter(Boolean).join(" ") : "";

    renderCase();
    renderGive(slot, space);
    renderSwap(slot, space);
    showPass();
    showTickets();

    const journal = $("journal");
    // each step in the reader's language (the customer texts), else the engine's English record
    journal.replaceChildren(...booking.journal.map((entry) => Holdfast.journalItem({ ...entry, decision: sentence(entry.decision) }, said)));
    tick();
  }

  // Giving a confirmed booking to someone else (POST /bookings/{id}/transfer): an event's or an
  // appointment's; the API refuses what its offering does not allow, and the page says so. A
  // waiting offer shows until when its link works, and can be taken back.
  function renderGive(slot, space) {
    const open = booking.status === "CONFIRMED" && !space && !orderLines;
    $("give-card").classList.toggle("hidden", !open);
    const offer = booking.transfer;
    $("give").classList.toggle("hidden", Boolean(offer));
    $("given").classList.toggle("hidden", !offer);
    $("given-text").textContent = offer ? fill(T.givenTo, { when: when(offer.expires_at) }) : "";
  }

  // Exchange (POST /bookings/{id}/exchange): an event's confirmed booking moved to other seats, a
  // different number of places, or another date of the same show (the listing's dates of the same name
  // that allow exchanges). Shown only while the booking's event allows it; the API decides the rest
  // (a dearer choice, a taken seat) and the page says what it answered. Read once per booking.
  let swapEvent;
  let swapDates = null;
  async function loadSwap() {
    swapEvent = null;
    try {
      const event = await api("GET", `/events/${encodeURIComponent(booking.event_id)}`);
      if (event.exchange_until_hours === undefined) return;
      swapEvent = event;
      // the listing names the dates; each one's own view says whether it takes exchanges
      const found = await api("GET", `/events?q=${encodeURIComponent(event.name)}&limit=10`).catch(() => ({ events: [] }));
      const named = (found.events || []).filter((e) => e.event_id !== event.event_id && e.name === event.name
        && e.inventory === event.inventory);
      const others = (await Promise.all(named.map((e) => api("GET", `/events/${encodeURIComponent(e.event_id)}`)
        .catch(() => null)))).filter((e) => e && e.exchange_until_hours !== undefined);
      swapDates = [event, ...others];
      $("swap-date").replaceChildren(...swapDates.map((e) => el("option", { value: e.event_id, text: when(e.starts_at) })));
      render();
    } catch (error) { swapEvent = null; }
  }

  function renderSwap(slot, space) {
    const open = booking.status === "CONFIRMED" && !slot && !space && !orderLines && !booking.transfer;
    if (open && swapEvent === undefined) { swapEvent = null; loadSwap(); }
    const shown = open && Boolean(swapEvent && swapDates);
    $("swap-card").classList.toggle("hidden", !shown);
    if (!shown) return;
    const seated = swapEvent.inventory === "seated";
    $("swap-seats-row").classList.toggle("hidden", !seated);
    $("swap-count-row").classList.toggle("hidden", seated);
    if (!$("swap-count").value) $("swap-count").value = booking.places.quantity || 1;
    const until = Date.parse(swapEvent.starts_at) - Number(swapEvent.exchange_until_hours) * 3600 * 1000;
    $("swap-until").textContent = fill(T.swapUntil, { when: when(new Date(until).toISOString()) });
    renderDifference();
  }

  // A dearer change waits for its difference (the booking's exchange_difference): what to pay, by
  // when, and the payment page's link; the form hides meanwhile (the API takes one change at a time).
  // Without a link yet (the payment service did not answer) the form stays, to send the change again.
  function renderDifference() {
    const difference = booking.exchange_difference;
    const url = difference && difference.confirmation_url;
    $("swap-pay").classList.toggle("hidden", !difference);
    $("swap").classList.toggle("hidden", Boolean(url));
    if (!difference) return;
    $("swap-pay-text").textContent = url ? fill(T.swapPay, { amount: money(difference.amount), when: when(difference.expires_at) })
      : T.swapPayLater;
    $("swap-pay-link").classList.toggle("hidden", !url);
    if (url && $("swap-pay-link").getAttribute("href") !== url) $("swap-pay-link").setAttribute("href", url);
  }

  // A late payment whose places went to someone else: the kind's alternatives (its own fields,
  // e.g. starts_at and resource_id, or a window) and the money back. Rebuilt only when the case
  // changes, so the once-a-second refresh never takes the keyboard focus off a button.
  let shownCase = "";
  function renderCase() {
    const resolution = booking.resolution;
    const open = Boolean(resolution && resolution.open && booking.status === "MANUAL_REVIEW");
    $("case").classList.toggle("hidden", !open);
    if (!open) { shownCase = ""; return; }
    $("status").textContent = T.caseHeading;
    $("explain").textContent = "";     // the journal below keeps the record; next_step explains
    const signature = JSON.stringify(resolution.alternatives || []) + resolution.respond_by;
    if (signature === shownCase) return;
    shownCase = signature;
    const options = resolution.alternatives || [];
    // review.next_step above already says what happened; this says what each button does
    $("case-text").textContent = (options.length ? `${T.caseTake} ` : "") + fill(T.caseBy, { when: when(resolution.respond_by) });
    $("alternatives").replaceChildren(...options.map((option) => el("button", {
      type: "button", text: describeOption(option), onclick: () => decide(alternativeFields(option)),
      class: linkedTo(option) ? "suggested" : "",
    })));
    $("refund").classList.toggle("suggested", param("choice") === "refund");
    const suggested = $("case").querySelector("button.suggested");
    if (suggested) suggested.focus();
  }

  // A choice's link in the conflict case's email (services/messages.py) marks that choice; it is
  // taken only when the customer presses it, so a mail scanner opening the link decides nothing.
  function linkedTo(option) {
    return param("choice") === "alternative"
      && Object.entries(alternativeFields(option)).every(([name, value]) => param(name) === String(value));
  }

  // what identifies an alternative: every field but its current count of free places
  function alternativeFields(option) {
    const fields = {};
    for (const [name, value] of Object.entries(option)) if (name !== "available") fields[name] = value;
    return fields;
  }

  function describeOption(option) {
    const fields = alternativeFields(option);
    const text = fields.starts_at ? when(fields.starts_at)
      : Object.entries(fields).filter(([name]) => name !== "resource_id")
        .map(([name, value]) => `${name.replace(/_/g, " ")} ${value}`).join(", ");
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  async function decide(fields) {
    showError("action-error", null);
    const body = fields ? Object.assign({ choice: "alternative" }, fields) : { choice: "refund" };
    // one key per booking and choice in this tab: a retry after a lost answer repeats, never doubles
    const keyName = `holdfast.resolve.${bookingId}.${JSON.stringify(body)}`;
    const key = sessionStorage.getItem(keyName) || newKey();
    sessionStorage.setItem(keyName, key);
    for (const button of $("case").querySelectorAll("button")) button.disabled = true;
    try {
      booking = Object.assign(await api("POST", `/bookings/${encodeURIComponent(bookingId)}/resolution`, { body, key }),
                              { journal: booking.journal });
      render();
      poll();
    } catch (error) {
      showError("action-error", error);
      shownCase = "";
      refresh();
    } finally {
      for (const button of $("case").querySelectorAll("button")) button.disabled = false;
    }
  }

  $("refund").addEventListener("click", () => decide(null));

  function tick() {
    if (!booking || !booking.hold_expires_at) return;
    const left = Math.max(0, Math.floor((Date.parse(booking.hold_expires_at) - Date.now()) / 1000));
    const minutes = Math.floor(left / 60), seconds = left % 60;
    $("countdown").textContent = left > 0 ? `${minutes}:${String(seconds).padStart(2, "0")}` : "0:00";
    if (left === 0 && (booking.status === "HELD" || booking.status === "PAYMENT_PENDING")) {
      $("after").textContent = holdText("hold_ended");
    }
  }

  // The engine's sentences (GET /texts) by the keys the booking's view names for it: a late
  // payment's outcome depends on the kind, a cancellation's refund on the booking's terms and time
  function holdText(name) {
    const key = (booking.texts || {})[name];
    return key && said[key] ? fill(said[key], { until: when(booking.hold_expires_at) }) : "";
  }

  function cancelText() {
    const key = (booking.texts || {}).cancel;
    return key && said[key] ? fill(said[key], { until: booking.cancel_refund_until ? when(booking.cancel_refund_until) : "",
                                                amount: booking.cancel_refund_amount ? money(booking.cancel_refund_amount) : "" })
      : booking.cancel_next_step || "";
  }

  // The entry pass as the API draws it (GET /bookings/{id}/pass.svg), once the booking carries
  // one: fetched with the customer's identity, shown as an image (img-src allows data: only)
  let passShown = null;
  async function showPass() {
    const token = booking.entry_token;
    $("pass-card").classList.toggle("hidden", !token);
    if (!token || token === passShown) return;
    passShown = token;
    try {
      const svg = await api("GET", `/bookings/${encodeURIComponent(bookingId)}/pass.svg`, { text: true });
      $("pass").src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
    } catch (error) { passShown = null; showError("action-error", error); }
  }

  // An event booking's tickets (GET /bookings/{id}/tickets/{ticket_id}.svg), one code per place
  let ticketsShown = "";
  async function showTickets() {
    const tickets = booking.tickets || [];
    $("tickets-card").classList.toggle("hidden", !tickets.length);
    const shown = tickets.map((t) => t.ticket_id).join();
    if (shown === ticketsShown) return;
    ticketsShown = shown;
    try {
      const figures = await Promise.all(tickets.map(async (ticket, n) => {
        const svg = await api("GET", `/bookings/${encodeURIComponent(bookingId)}/tickets/${encodeURIComponent(ticket.ticket_id)}.svg`,
                              { text: true });
        const label = ticket.seat_id ? Holdfast.fill(T.ticketSeat, { seat: ticket.seat_id }) : Holdfast.fill(T.ticketNumber, { n: n + 1 });
        return el("figure", { class: "ticket" }, el("img", { class: "pass", width: "200", height: "200", alt: Holdfast.fill(T.ticketAlt, { label }),
          src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}` }), el("figcaption", {}, label));
      }));
      $("tickets").replaceChildren(...figures);
    } catch (error) { ticketsShown = ""; showError("action-error", error); }
  }

  let orderLines = null;

  function lineText(line) {
    const p = line.places || {};
    const what = p.seats ? fill(T.seats, { seats: p.seats.join(", ") })
      : line.space_id || p.space_id ? `${fill(T.space, { space: line.space_id || p.space_id })}, ${fill(T.timeTo, { from: when(line.from || p.from), to: when(line.to || p.to) })}`
      : p.starts_at ? fill(T.timeTo, { from: when(p.starts_at), to: when(p.ends_at) })
      : count(T.placesCount, p.quantity || 0);
    return `${line.name}: ${what} (${money(line.amount)})`;
  }

  async function refresh() {
    try {
      said = await texts();
      booking = await api("GET", `/bookings/${encodeURIComponent(bookingId)}`);
      // an order (POST /orders): its lines, each with what it took and what it costs
      if (booking.places.kind === "basket" && !orderLines) {
        orderLines = (await api("GET", `/orders/${encodeURIComponent(bookingId)}`)).lines;
      }
      showError("error", null);
      render();
      // a dearer change waiting for its difference is watched too: paid in the provider's tab, the
      // booking moves and this page shows it
      return !FINAL.has(booking.status) || Boolean(booking.exchange_difference);
    } catch (error) {
      const anonymous = error.status === 401 && Holdfast.config.identity === "header" && !Holdfast.customer();
      showError("error", anonymous ? T.typeName : error);
      return error.status !== 404 && error.status !== 403;
    }
  }

  // only ever to a web page: the provider's payment page is http(s)
  function goToProvider(url) {
    if (!/^https?:\/\//i.test(url || "")) throw new Error(T.noProvider);
    location.href = url;
  }

  // The payment; ``contactEmail``: the address a booking made without one is asked for when its
  // organizer issues fiscal receipts (the API answers contact_required first).
  async function pay(contactEmail) {
    // one key per booking and address in this tab: a retry after an unanswered call never makes a
    // second payment, and the request with the address is a request of its own
    const keyName = `holdfast.pay.${bookingId}${contactEmail ? ".contact" : ""}`;
    const key = sessionStorage.getItem(keyName) || newKey();
    sessionStorage.setItem(keyName, key);
    $("pay").disabled = $("contact-pay").disabled = true;
    try {
      const options = contactEmail ? { key, body: { contact_email: contactEmail } } : { key };
      const answer = await api("POST", `/bookings/${encodeURIComponent(bookingId)}/payment`, options);
      goToProvider(answer.confirmation_url);
    } catch (error) {
      if (error.code === "contact_required") {
        $("contact").classList.remove("hidden");
        $("contact-email").focus();
      } else {
        showError("action-error", error);
      }
      refresh();
    } finally { $("pay").disabled = $("contact-pay").disabled = false; }
  }

  $("pay").addEventListener("click", async () => {
    showError("action-error", null);
    if (booking.payment && booking.payment.confirmation_url && booking.payment.status === "pending") {
      try { goToProvider(booking.payment.confirmation_url); } catch (error) { showError("action-error", error); }
      return;
    }
    await pay(null);
  });

  $("contact").addEventListener("submit", async (event) => {
    event.preventDefault();
    showError("action-error", null);
    const address = $("contact-email").value.trim();
    if (!address || !$("contact-email").checkValidity()) {
      $("contact-email").setAttribute("aria-invalid", "true");
      $("contact-email").focus();
      return;
    }
    $("contact-email").removeAttribute("aria-invalid");
    await pay(address);
  });

  $("cancel").addEventListener("click", async () => {
    showError("action-error", null);
    if (!confirm(booking.status === "CONFIRMED" ? `${T.askCancel} ${$("cancel-terms").textContent}` : T.askGiveUp)) return;
    try {
      booking = Object.assign(await api("POST", `/bookings/${encodeURIComponent(bookingId)}/cancel`), { journal: booking.journal });
      render();
      poll();
    } catch (error) { showError("action-error", error); }
  });

  $("give").addEventListener("submit", async (event) => {
    event.preventDefault();
    showError("give-error", null);
    const address = $("give-email").value.trim();
    if (!address || !$("give-email").checkValidity()) {
      $("give-email").setAttribute("aria-invalid", "true");
      $("give-email").focus();
      return;
    }
    $("give-email").removeAttribute("aria-invalid");
    $("give-send").disabled = true;
    try {
      await api("POST", `/bookings/${encodeURIComponent(bookingId)}/transfer`, { body: { to_email: address } });
      $("give-email").value = "";
      await refresh();
      $("withdraw").focus();
    } catch (error) { showError("give-error", error); } finally { $("give-send").disabled = false; }
  });

  $("withdraw").addEventListener("click", async () => {
    showError("give-error", null);
    try {
      await api("DELETE", `/bookings/${encodeURIComponent(bookingId)}/transfer`);
      await refresh();
      $("give-email").focus();
    } catch (error) { showError("give-error", error); }
  });

  $("swap").addEventListener("submit", async (event) => {
    event.preventDefault();
    showError("swap-error", null);
    $("swap-done").classList.add("hidden");
    const seated = swapEvent && swapEvent.inventory === "seated";
    const field = seated ? $("swap-seats") : $("swap-count");
    const seats = $("swap-seats").value.split(/[\s,;]+/).map((seat) => seat.trim()).filter(Boolean);
    const quantity = Number($("swap-count").value);
    if (seated ? !seats.length : !(quantity >= 1)) {
      field.setAttribute("aria-invalid", "true");
      showError("swap-error", T.swapAsk);
      field.focus();
      return;
    }
    field.removeAttribute("aria-invalid");
    const target = $("swap-date").value;
    const body = Object.assign(seated ? { seats } : { quantity }, target !== booking.event_id ? { event_id: target } : {});
    // one key per asked change in this tab: a repeat after a lost answer (a 503) is the same request
    const keyName = `holdfast.swap.${bookingId}.${JSON.stringify(body)}`;
    const key = sessionStorage.getItem(keyName) || newKey();
    sessionStorage.setItem(keyName, key);
    const before = ((booking.payment || {}).exchange_refunds || []).length;
    $("swap-send").disabled = true;
    try {
      const moved = await api("POST", `/bookings/${encodeURIComponent(bookingId)}/exchange`, { key, body });
      const back = ((moved.payment || {}).exchange_refunds || [])[before];
      if (moved.exchange_difference) {
        // dearer: nothing moved yet; the difference's card says what to pay and links to its payment
        booking = moved;
        renderDifference();
        if (moved.exchange_difference.confirmation_url) $("swap-pay-link").focus();
        poll();
        return;
      }
      $("swap-done").textContent = back ? fill(T.swapBack, { amount: money(back.amount) }) : T.swapDone;
      $("swap-done").classList.remove("hidden");
      // the booking may be on another date now: that date's view is among those already read
      swapEvent = swapDates.find((e) => e.event_id === moved.event_id) || undefined;
      await refresh();
    } catch (error) { showError("swap-error", error); } finally { $("swap-send").disabled = false; }
  });

  let stop = null;
  function poll() { if (stop) stop(); stop = every(1000, refresh); }

  if (!bookingId) showError("error", T.noBooking);
  else { poll(); ticker = setInterval(tick, 250); }
  document.addEventListener("holdfast:identity", poll);
})();
