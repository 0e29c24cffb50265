"use strict";
(() => {
  const { api, el, showError, money, when, param, customer, newKey, every, words, fill, lang } = Holdfast;
  const T = words({
    en: {
      typeName: "Type your name at the top of the page first: it is how we know your bookings.",
      meta: "{when} · {venue}, {city} · {category} · {price} a place",
      metaFrom: "{when} · {venue}, {city} · {category} · from {price}", chooseSeats: "Choose your seats",
      howMany: "How many tickets?", row: "Row {row}", seatsGroup: "Seats", seatLabel: "Seat {seat}, {state}",
      available: "available", held: "held by someone else", sold: "sold", mine: "yours",
      picked: "Picked: {seats} ({count} × {price}).", nonePicked: "No seats picked. Click a seat, or let us choose.",
      placesCount: { one: "{count} place", other: "{count} places" }, pickFirst: "Pick at least one seat on the map, or use best available.",
      queueAgain: "Join the queue again to get a new turn.",
      waiting: "You are number {position} on the waitlist for {places}. Keep this page open or come back later: when places come back, they are held for you.",
      offering: "Your turn has come: we are holding places for you now…",
      offered: "Your turn came: places are held for you until {when}. ", payThem: "Pay for them on your booking page",
      passed: "Your offer ran out before it was paid, so the places went to the next in line. You can join again.",
      done: "You bought the places you were offered.",
      skipped: "Your turn was skipped because you already have places for this event, or the places could not be held for you. You can join again.",
      left: "You left the waitlist.", admitted: "It is your turn: book before {when}.",
      inQueue: "You are in the queue: {position} ahead of you, including you.",
      wait: { one: " About {count} minute to go.", other: " About {count} minutes to go." },
      paused: " Everything is held right now; the queue moves when places come back.", allSold: "Everything is sold.",
      turnPassed: "Your turn to book passed unused. Join the queue again.",
      missing: "This page needs an event: open one from the list of events.",
      STATUS: { HELD: "held", PAYMENT_PENDING: "payment pending", CONFIRMED: "confirmed", MANUAL_REVIEW: "being checked",
                EXPIRED: "expired", CANCELLED: "cancelled", PAYMENT_FAILED: "payment failed", REFUNDED: "refunded",
                REFUND_PENDING: "refund pending" },
      loading: "Loading…", availableCount: "available", heldCount: "held while people pay", soldCount: "sold",
      room: "Waiting room", roomText: "Many people want this event. Join the queue and we will let you in to book in turn.",
      join: "Join the queue", places: "Choose your places", legendAvailable: "available", legendHeld: "held",
      legendSold: "sold", legendMine: "yours", legendPicked: "picked", stage: "STAGE", seatMap: "Seat map",
      best: "Best available", holdBest: "Hold the best", tickets: "Tickets", email: "Email for updates (optional)",
      promo: "Promo or access code (optional)",
      hold: "Hold", soldOut: "Sold out",
      waitlistText: "Everything is sold or held right now. Join the waitlist: when places come back, the next in line gets them held for a while.",
      wanted: "Places wanted", joinList: "Join the waitlist", leaveList: "Leave the waitlist", yours: "Your bookings for this event",
      priceCategories: "Prices", categoryPrices: "{name}: {prices}", typePrice: "{type} {price}",
      ticketFor: "Ticket for seat {seat}", pickedTotal: "Picked: {seats}. Total {total}.", zone: "Zone", ticketType: "Ticket",
      zoneOption: "{name} ({available} left)", seatCategory: "Seat {seat}, {category}, {state}",
      TYPES: { adult: "adult", child: "child", concession: "concession", student: "student", senior: "senior" },
      parkHere: "Park at the venue", parkWindow: "A space from {from} to {to}, paid with your tickets in one payment.",
      plate: "Car number plate", vehicle: "Vehicle", plateFirst: "Type the car's number plate to park.",
      VEHICLES: { COMPACT: "compact", REGULAR: "regular", LARGE: "large" },
    },
    ru: {
      typeName: "Сначала введите своё имя вверху страницы: по нему мы узнаём ваши бронирования.",
      meta: "{when} · {venue}, {city} · {category} · {price} за место",
      metaFrom: "{when} · {venue}, {city} · {category} · от {price}", chooseSeats: "Выберите места",
      howMany: "Сколько билетов?", row: "Ряд {row}", seatsGroup: "Места", seatLabel: "Место {seat}, {state}",
      available: "свободно", held: "забронировано другим", sold: "продано", mine: "ваше",
      picked: "Выбрано: {seats} ({count} × {price}).", nonePicked: "Места не выбраны. Нажмите на место или доверьте выбор нам.",
      placesCount: { one: "{count} место", few: "{count} места", many: "{count} мест", other: "{count} места" },
      pickFirst: "Выберите хотя бы одно место на схеме или воспользуйтесь «лучшими свободными».",
      queueAgain: "Встаньте в очередь снова, чтобы получить новую очередь.",
      waiting: "Вы {position}-й в листе ожидания на {places}. Не закрывайте страницу или вернитесь позже: когда места освободятся, мы забронируем их для вас.",
      offering: "Подошла ваша очередь: бронируем для вас места…",
      offered: "Подошла ваша очередь: места забронированы за вами до {when}. ", payThem: "Оплатите их на странице бронирования",
      passed: "Предложение истекло без оплаты, и места перешли следующему. Можно встать в лист ожидания снова.",
      done: "Вы купили предложенные места.",
      skipped: "Ваша очередь пропущена: у вас уже есть места на это событие или их не удалось забронировать. Можно встать в лист ожидания снова.",
      left: "Вы вышли из листа ожидания.", admitted: "Ваша очередь: забронируйте до {when}.",
      inQueue: "Вы в очереди: перед вами, включая вас, {position}.",
      wait: { one: " Осталось около {count} минуты.", few: " Осталось около {count} минут.", many: " Осталось около {count} минут.", other: " Осталось около {count} минуты." },
      paused: " Сейчас всё забронировано; очередь двинется, когда места освободятся.", allSold: "Всё продано.",
      turnPassed: "Ваша очередь прошла неиспользованной. Встаньте в очередь снова.",
      missing: "Откройте эту страницу из списка событий: не указано событие.",
      STATUS: { HELD: "забронировано", PAYMENT_PENDING: "ожидает оплаты", CONFIRMED: "подтверждено", MANUAL_REVIEW: "на проверке",
                EXPIRED: "бронь истекла", CANCELLED: "отменено", PAYMENT_FAILED: "оплата не прошла", REFUNDED: "деньги возвращены",
                REFUND_PENDING: "возврат в пути" },
      loading: "Загрузка…", availableCount: "свободно", heldCount: "в брони, пока оплачивают", soldCount: "продано",
      room: "Зал ожидания", roomText: "Это событие хотят многие. Встаньте в очередь, и мы пустим вас бронировать по очереди.",
      join: "Встать в очередь", places: "Выберите места", legendAvailable: "свободно", legendHeld: "в брони",
      legendSold: "продано", legendMine: "ваши", legendPicked: "выбрано", stage: "СЦЕНА", seatMap: "Схема зала",
      best: "Лучшие свободные", holdBest: "Забронировать лучшие", tickets: "Билеты", email: "Email для уведомлений (необязательно)",
      promo: "Промокод или код доступа (необязательно)",
      hold: "Забронировать", soldOut: "Всё продано",
      waitlistText: "Сейчас всё продано или забронировано. Встаньте в лист ожидания: когда места освободятся, следующему в очереди их забронируют на время.",
      wanted: "Сколько мест нужно", joinList: "Встать в лист ожидания", leaveList: "Выйти из листа ожидания", yours: "Ваши бронирования на это событие",
      priceCategories: "Цены", categoryPrices: "{name}: {prices}", typePrice: "{type} {price}",
      ticketFor: "Билет на место {seat}", pickedTotal: "Выбрано: {seats}. Итого {total}.", zone: "Зона", ticketType: "Билет",
      zoneOption: "{name} (осталось {available})", seatCategory: "Место {seat}, {category}, {state}",
      TYPES: { adult: "взрослый", child: "детский", concession: "льготный", student: "студенческий", senior: "пенсионный" },
      parkHere: "Парковка у площадки", parkWindow: "Место с {from} до {to}, оплата вместе с билетами одним платежом.",
      plate: "Номер машины", vehicle: "Машина", plateFirst: "Введите номер машины, чтобы забронировать парковку.",
      VEHICLES: { COMPACT: "малая", REGULAR: "обычная", LARGE: "большая" },
    },
  });
  const plurals = new Intl.PluralRules(lang());
  const count = (forms, n) => fill(forms[plurals.select(n)] || forms.other, { count: n });
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];
  for (const node of document.querySelectorAll("[data-label]")) node.setAttribute("aria-label", T[node.dataset.label]);
  const eventId = param("id");
  const $ = (id) => document.getElementById(id);
  const captcha = Holdfast.challenge($("captcha"));
  const ACTIVE = new Set(["HELD", "PAYMENT_PENDING", "CONFIRMED", "MANUAL_REVIEW"]);
  let event = null;
  let seats = [];            // [{seat, state}] as the API last told
  let seatsEtag = null;
  const picked = new Set();
  const mineSeats = new Set();
  let admissionToken = null;
  let onWaitlist = false;

  function requireName(box) {
    if (Holdfast.config.identity === "header" && !customer()) {
      showError(box, T.typeName);
      $("customer-name") && $("customer-name").focus();
      return false;
    }
    return true;
  }

  // ---------------------------------------------------------------- event and counts
  function renderEvent() {
    document.title = `Holdfast: ${event.name}`;
    $("name").textContent = event.name;
    $("meta").textContent = fill(event.prices ? T.metaFrom : T.meta, { when: when(event.starts_at), venue: event.venue, city: event.city,
                                           category: event.category, price: money(event.price) });
    renderCounts(event.counts);
    const seated = event.inventory === "seated";
    $("seated").classList.toggle("hidden", !seated);
    $("general").classList.toggle("hidden", seated);
    $("buy-title").textContent = seated ? T.chooseSeats : T.howMany;
    renderPriceList();
    renderZones();
    renderParking();
  }

  // ---------------------------------------------------------------- parking with the tickets
  // The organizer's lot linked to the event (GET /events/{id} parking): its window around the
  // start goes into the order's parking line, and tickets and space are held and paid as one order.
  function renderParking() {
    const park = event.companion;   // the lot linked with POST /events/{id}/parking
    $("parking").classList.toggle("hidden", !park);
    if (!park) return;
    $("park-window").textContent = fill(T.parkWindow, { from: when(park.from), to: when(park.to) });
    const vehicle = $("vehicle");
    if (!vehicle.options.length) {
      vehicle.replaceChildren(...Object.entries(T.VEHICLES).map(([value, text]) => el("option", { value, text })));
      vehicle.value = "REGULAR";
    }
    $("park-details").classList.toggle("hidden", !$("park").checked);
  }
  $("park").addEventListener("change", () => { renderParking(); askChallenge(); });

  // A hold with parking is an order of the event and its lot: it needs a challenge when either
  // asks for one, so the lot's own view (read once, when parking is first ticked) counts too.
  let lotView = null;
  async function askChallenge() {
    const parking = event.companion && $("park").checked;
    if (parking && !lotView) {
      try { lotView = await api("GET", `/lots/${encodeURIComponent(event.companion.offering_id)}`); }
      catch (_) { lotView = {}; }   // unreadable: the order's own refusal will say what it needs
    }
    const asking = [event, parking ? lotView : null].find((view) => view && view.captcha_required);
    captcha.need(asking || event);
  }

  // ---------------------------------------------------------------- price categories and ticket types
  // What the page shows of a price is the API's (GET /events/{id}); the server prices the hold.
  const typeName = (type) => (T.TYPES && T.TYPES[type]) || type;
  const categoryOf = (id) => (event.price_categories || []).find((c) => c.id === id);
  const typesOf = (category) => (event.prices || []).filter((p) => p.price_category === category);
  function priceOf(category, type) {
    const found = typesOf(category).find((p) => p.ticket_type === type) || typesOf(category)[0];
    return found ? found.price : event.price;
  }
  function sumOf(prices) {
    if (!prices.length) return null;
    const cents = prices.reduce((all, p) => all + Math.round(Number(p.value) * 100), 0);
    return { value: (cents / 100).toFixed(2), currency: prices[0].currency };
  }

  // through the CSSOM: the pages' Content-Security-Policy allows no inline style attributes
  function tinted(node, color) { if (color) node.style.setProperty("--cat", color); return node; }

  function renderPriceList() {
    const box = $("price-list");
    const categories = event.price_categories || [];
    box.classList.toggle("hidden", !categories.length);
    const list = $("price-legend");
    list.replaceChildren();
    for (const category of categories) {
      const prices = typesOf(category.id).map((p) => fill(T.typePrice, { type: typeName(p.ticket_type), price: money(p.price) }));
      list.append(el("li", { "data-category": category.id },
        tinted(el("span", { class: "swatch", "aria-hidden": "true" }), category.color || "#5a9e70"),
        el("span", { text: fill(T.categoryPrices, { name: category.name, prices: prices.join(", ") }) })));
    }
  }

  function renderZones() {
    const zones = event.zones || [];
    $("zone-label").classList.toggle("hidden", zones.length < 2);
    const select = $("zone");
    const chosen = select.value;
    select.replaceChildren(...zones.map((zone) => el("option", { value: zone.id,
      text: fill(T.zoneOption, { name: zone.name, available: zone.counts ? zone.counts.available : "?" }) })));
    if (chosen) select.value = chosen;
    renderZoneTypes();
  }

  function renderZoneTypes() {
    const zone = (event.zones || []).find((z) => z.id === $("zone").value) || (event.zones || [])[0];
    const types = zone ? typesOf(zone.price_category) : [];
    $("type-label").classList.toggle("hidden", types.length < 2);
    const select = $("ticket-type");
    const chosen = select.value;
    select.replaceChildren(...types.map((p) => el("option", { value: p.ticket_type,
      text: fill(T.typePrice, { type: typeName(p.ticket_type), price: money(p.price) }) })));
    if (types.some((p) => p.ticket_type === chosen)) select.value = chosen;
  }
  $("zone").addEventListener("change", renderZoneTypes);

  function renderCounts(counts) {
    $("available").textContent = counts.available;
    $("held").textContent = counts.held;
    $("sold").textContent = counts.sold;
    const soldOut = counts.available === 0;
    const gated = event.high_demand && !admissionToken;
    $("buy").classList.toggle("hidden", soldOut || gated);
    $("waitlist").classList.toggle("hidden", !soldOut && !onWaitlist);
  }

  async function refreshEvent() {
    try {
      event = await api("GET", `/events/${encodeURIComponent(eventId)}`);
      renderEvent();
      askChallenge();
      showError("error", null);
    } catch (error) { showError("error", error); if (error.status === 404) return false; }
  }

  // ---------------------------------------------------------------- seat map
  function seatParts(id) {
    const cut = id.lastIndexOf("-");
    return cut > 0 ? [id.slice(0, cut), id.slice(cut + 1)] : ["", id];
  }

  function stateOf(seat) { return mineSeats.has(seat.seat) && seat.state !== "available" ? "mine" : seat.state; }

  function renderSeats() {
    const rows = new Map();
    for (const seat of seats) {
      const [row] = seatParts(seat.seat);
      if (!rows.has(row)) rows.set(row, []);
      rows.get(row).push(seat);
    }
    const map = $("seatmap");
    const focused = document.activeElement && document.activeElement.dataset.seat;
    map.replaceChildren();
    for (const [row, list] of rows) {
      const line = el("div", { class: "seatrow", role: "group", "aria-label": row ? fill(T.row, { row }) : T.seatsGroup },
                      el("span", { class: "rowname", "aria-hidden": "true", text: row }));
      for (const seat of list) {
        const state = stateOf(seat);
        if (state !== "available") picked.delete(seat.seat);
        const [, number] = seatParts(seat.seat);
        const said = T[state];
        const category = seat.price_category && categoryOf(seat.price_category);
        const label = category ? fill(T.seatCategory, { seat: seat.seat, category: category.name, state: said })
                               : fill(T.seatLabel, { seat: seat.seat, state: said });
        line.append(tinted(el("button", {
          type: "button", class: "seat", "data-seat": seat.seat, "data-state": state,
          "data-category": seat.price_category || "",
          "aria-pressed": picked.has(seat.seat) ? "true" : "false",
          "aria-label": label, title: label,
          disabled: state !== "available", text: number,
          onclick: () => toggle(seat.seat),
        }), category && category.color));
      }
      map.append(line);
    }
    if (focused) { const again = map.querySelector(`[data-seat="${CSS.escape(focused)}"]`); again && !again.disabled && again.focus(); }
    renderPicked();
  }

  function toggle(seat) {
    if (picked.has(seat)) picked.delete(seat); else picked.add(seat);
    renderSeats();
  }

  const seatTypes = new Map();   // seat -> the ticket type the customer chose for it
  function renderPicked() {
    const list = [...picked];
    const priced = event.prices && event.prices.length;
    const box = $("picked-types");
    box.replaceChildren();
    for (const id of priced ? list : []) {
      const seat = seats.find((s) => s.seat === id);
      const category = seat && seat.price_category;
      const types = typesOf(category);
      if (!types.some((p) => p.ticket_type === seatTypes.get(id))) seatTypes.set(id, types.length ? types[0].ticket_type : "");
      const select = el("select", { id: `type-${id}`, "data-seat": id,
        onchange: (e) => { seatTypes.set(id, e.target.value); renderPicked(); } },
        ...types.map((p) => el("option", { value: p.ticket_type,
          text: fill(T.typePrice, { type: typeName(p.ticket_type), price: money(p.price) }) })));
      select.value = seatTypes.get(id);
      box.append(el("label", { for: `type-${id}` }, el("span", { text: fill(T.ticketFor, { seat: id }) }), select));
    }
    if (!list.length) { $("picked").textContent = T.nonePicked; return; }
    if (priced) {
      const seatOf = (id) => seats.find((s) => s.seat === id) || {};
      const total = sumOf(list.map((id) => priceOf(seatOf(id).price_category, seatTypes.get(id))));
      $("picked").textContent = fill(T.pickedTotal, { seats: list.join(", "), total: money(total) });
      return;
    }
    $("picked").textContent = fill(T.picked, { seats: list.join(", "), count: list.length, price: money(event.price) });
  }

  async function refreshSeats() {
    if (!event || event.inventory !== "seated") return;
    try {
      const answer = await api("GET", `/events/${encodeURIComponent(eventId)}/seats`, { etag: seatsEtag });
      if (answer.notModified) return;
      seatsEtag = answer.etag;
      seats = answer.seats;
      renderCounts(answer.counts);
      renderSeats();
    } catch (error) { showError("error", error); }
  }

  // ---------------------------------------------------------------- the customer's own bookings
  async function refreshMine() {
    const ids = Holdfast.rememberedBookings(eventId);
    if (!ids.length || !customer()) { $("mine").classList.add("hidden"); return; }
    const found = [];
    for (const id of ids) {
      try { found.push(await api("GET", `/bookings/${encodeURIComponent(id)}`)); } catch (_) { /* another customer's */ }
    }
    mineSeats.clear();
    const list = $("mine-list");
    list.replaceChildren();
    for (const booking of found) {
      const places = booking.places.seats ? booking.places.seats.join(", ") : count(T.placesCount, booking.places.quantity);
      if (ACTIVE.has(booking.status)) (booking.places.seats || []).forEach((s) => mineSeats.add(s));
      list.append(el("li", {}, el("a", { href: `booking.html?id=${encodeURIComponent(booking.booking_id)}`,
        text: `${places}: ${T.STATUS[booking.status] || booking.status.replace(/_/g, " ").toLowerCase()}` })));
    }
    $("mine").classList.toggle("hidden", found.length === 0);
    if (seats.length) renderSeats();
  }

  // ---------------------------------------------------------------- hold
  async function hold(body) {
    showError("hold-error", null);
    if (!requireName("hold-error")) return;
    const email = $("email").value.trim();
    if (email) body.contact_email = email;
    // a code is checked and priced by the engine: the booking page shows the amount before and after it
    const code = $("code").value.trim();
    if (code) body.code = code;
    const headers = { ...(admissionToken ? { "X-Admission-Token": admissionToken } : {}), ...captcha.headers() };
    const park = event.companion && $("park").checked;
    if (park && !$("plate").value.trim()) { showError("hold-error", T.plateFirst); $("plate").focus(); return; }
    $("hold").disabled = $("best").disabled = true;
    try {
      const booking = park
        // one order: the tickets and the space, held together or not at all, paid once
        ? await api("POST", "/orders", { key: newKey(), body: { contact_email: body.contact_email, lines: [
            { event_id: eventId, ...Object.fromEntries(Object.entries(body).filter(([k]) => k !== "contact_email")) },
            { lot_id: event.companion.offering_id, vehicle_type: $("vehicle").value, plate: $("plate").value.trim(),
              from: event.companion.from, to: event.companion.to }] }, headers: captcha.headers() }).then((order) => ({ ...order, booking_id: order.order_id }))
        : await api("POST", `/events/${encodeURIComponent(eventId)}/bookings`, { body, key: newKey(), headers });
      Holdfast.rememberBooking(eventId, booking.booking_id);
      location.href = `booking.html?id=${encodeURIComponent(booking.booking_id)}`;
    } catch (error) {
      showError("hold-error", error);
      captcha.reset();   // a token is good once, and a refused one is no better next time
      if (/^admission_/.test(error.code)) {
        // the turn lapsed or belongs to another name: queue again
        admissionToken = null;
        sessionStorage.removeItem(`holdfast.admission.${eventId}`);
        $("room-join").classList.remove("hidden");
        $("room-text").textContent = T.queueAgain;
        renderCounts(event.counts);
      }
      if (error.code === "seats_unavailable" || error.code === "sold_out") {
        seatsEtag = null;
        await Promise.all([refreshSeats(), refreshEvent()]);
      }
    } finally { $("hold").disabled = $("best").disabled = false; }
  }

  $("hold").addEventListener("click", () => {
    if (event.inventory === "seated") {
      if (!picked.size) { showError("hold-error", T.pickFirst); return; }
      const body = { seats: [...picked] };
      if (event.prices && event.prices.length) body.ticket_types = Object.fromEntries([...picked].map((id) => [id, seatTypes.get(id)]));
      hold(body);
    } else {
      const body = { quantity: Number($("quantity").value) };
      if ((event.zones || []).length) body.zone = $("zone").value;
      if ($("ticket-type").value) body.ticket_type = $("ticket-type").value;
      hold(body);
    }
  });
  $("best-n").addEventListener("input", () => { $("best-label").textContent = $("best-n").value; });
  $("best").addEventListener("click", () => hold({ quantity: Number($("best-n").value), best_available: true }));

  // ---------------------------------------------------------------- waitlist
  function renderWaitlist(entry) {
    onWaitlist = ["WAITING", "OFFERING", "OFFERED"].includes(entry.state);
    $("waitlist-join").classList.toggle("hidden", onWaitlist);
    $("waitlist-n-label").classList.toggle("hidden", onWaitlist);
    $("waitlist-leave").classList.toggle("hidden", entry.state !== "WAITING");
    const text = $("waitlist-text");
    if (entry.state === "WAITING") {
      text.textContent = fill(T.waiting, { position: entry.position, places: count(T.placesCount, entry.quantity) });
    } else if (entry.state === "OFFERING") {
      text.textContent = T.offering;
    } else if (entry.state === "OFFERED" && entry.offer) {
      Holdfast.rememberBooking(eventId, entry.offer.booking_id);
      text.replaceChildren(fill(T.offered, { when: when(entry.offer.hold_expires_at) }),
        el("a", { href: `booking.html?id=${encodeURIComponent(entry.offer.booking_id)}`, text: T.payThem }), ".");
    } else if (entry.state === "PASSED") {
      text.textContent = T.passed;
    } else if (entry.state === "DONE") {
      text.textContent = T.done;
    } else if (entry.state === "SKIPPED") {
      text.textContent = T.skipped;
    }
    renderCounts(event.counts);
  }

  async function refreshWaitlist() {
    if (!customer() && Holdfast.config.identity === "header") return;
    try { renderWaitlist(await api("GET", `/events/${encodeURIComponent(eventId)}/waitlist`)); }
    catch (error) { if (error.code !== "not_on_waitlist") showError("waitlist-error", error); }
  }

  $("waitlist-join").addEventListener("click", async () => {
    showError("waitlist-error", null);
    if (!requireName("waitlist-error")) return;
    try {
      // a high-demand event's line is behind its waiting room, as a hold is
      const headers = { ...(admissionToken ? { "X-Admission-Token": admissionToken } : {}), ...captcha.headers() };
      renderWaitlist(await api("POST", `/events/${encodeURIComponent(eventId)}/waitlist`, { body: { quantity: Number($("waitlist-n").value) }, headers }));
    } catch (error) { showError("waitlist-error", error); }
  });
  $("waitlist-leave").addEventListener("click", async () => {
    showError("waitlist-error", null);
    try {
      await api("DELETE", `/events/${encodeURIComponent(eventId)}/waitlist`);
      onWaitlist = false;
      $("waitlist-text").textContent = T.left;
      $("waitlist-join").classList.remove("hidden");
      $("waitlist-n-label").classList.remove("hidden");
      $("waitlist-leave").classList.add("hidden");
    } catch (error) { showError("waitlist-error", error); }
  });

  // ---------------------------------------------------------------- waiting room
  let roomTimer = null;
  function renderRoom(status) {
    const text = $("room-text");
    if (status.status === "admitted") {
      admissionToken = status.admission_token;
      sessionStorage.setItem(`holdfast.admission.${eventId}`, admissionToken);
      text.textContent = fill(T.admitted, { when: when(status.token_expires_at) });
      $("room-join").classList.add("hidden");
    } else if (status.status === "waiting") {
      const wait = status.estimated_wait_seconds ? count(T.wait, Math.ceil(status.estimated_wait_seconds / 60)) : "";
      text.textContent = fill(T.inQueue, { position: status.position }) + wait + (status.paused ? T.paused : "");
      $("room-join").classList.add("hidden");
    } else if (status.status === "sold_out") {
      text.textContent = status.message || T.allSold;
    } else if (status.status === "expired") {
      admissionToken = null;
      text.textContent = status.message || T.turnPassed;
      $("room-join").classList.remove("hidden");
    } else if (status.status === "not_required") {
      $("room").classList.add("hidden");
    }
    renderCounts(event.counts);
    return status.status === "waiting";
  }

  async function pollRoom() {
    try {
      const status = await api("GET", `/events/${encodeURIComponent(eventId)}/queue`);
      if (!renderRoom(status)) return false;
      roomTimer = setTimeout(pollRoom, Math.max(1, status.poll_after_seconds || 2) * 1000);
    } catch (error) { if (error.code !== "not_in_queue") showError("error", error); }
  }

  $("room-join").addEventListener("click", async () => {
    showError("error", null);
    if (!requireName("error")) return;
    try {
      const status = await api("POST", `/events/${encodeURIComponent(eventId)}/queue`);
      clearTimeout(roomTimer);
      if (renderRoom(status)) roomTimer = setTimeout(pollRoom, Math.max(1, status.poll_after_seconds || 2) * 1000);
    } catch (error) { showError("error", error); }
  });

  // ---------------------------------------------------------------- start
  async function start() {
    if (!eventId) { showError("error", T.missing); return; }
    if ((await refreshEvent()) === false || !event) return;
    if (event.high_demand) {
      admissionToken = sessionStorage.getItem(`holdfast.admission.${eventId}`);
      $("room").classList.remove("hidden");
      if (customer()) pollRoom();
    }
    await refreshMine();
    every(2000, refreshEvent);
    if (event.inventory === "seated") every(1000, refreshSeats);
    every(2000, async () => { if (onWaitlist || (event && event.counts.available === 0)) await refreshWaitlist(); });
    every(3000, refreshMine);
  }
  document.addEventListener("holdfast:identity", () => { refreshMine(); refreshWaitlist(); });
  start();
})();
