"use strict";
(() => {
  const { api, el, showError, money, when, param, customer, newKey, every } = Holdfast;
  const eventId = param("id");
  const $ = (id) => document.getElementById(id);
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
      showError(box, "Type your name at the top of the page first: it is how we know your bookings.");
      $("customer-name") && $("customer-name").focus();
      return false;
    }
    return true;
  }

  // ---------------------------------------------------------------- event and counts
  function renderEvent() {
    document.title = `Holdfast: ${event.name}`;
    $("name").textContent = event.name;
    $("meta").textContent = `${when(event.starts_at)} · ${event.venue}, ${event.city} · ${event.category} · ${money(event.price)} a place`;
    renderCounts(event.counts);
    const seated = event.inventory === "seated";
    $("seated").classList.toggle("hidden", !seated);
    $("general").classList.toggle("hidden", seated);
    $("buy-title").textContent = seated ? "Choose your seats" : "How many tickets?";
  }

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
      const line = el("div", { class: "seatrow", role: "group", "aria-label": row ? `Row ${row}` : "Seats" },
                      el("span", { class: "rowname", "aria-hidden": "true", text: row }));
      for (const seat of list) {
        const state = stateOf(seat);
        if (state !== "available") picked.delete(seat.seat);
        const [, number] = seatParts(seat.seat);
        const words = { available: "available", held: "held by someone else", sold: "sold", mine: "yours" }[state];
        line.append(el("button", {
          type: "button", class: "seat", "data-seat": seat.seat, "data-state": state,
          "aria-pressed": picked.has(seat.seat) ? "true" : "false",
          "aria-label": `Seat ${seat.seat}, ${words}`, title: `${seat.seat}: ${words}`,
          disabled: state !== "available", text: number,
          onclick: () => toggle(seat.seat),
        }));
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

  function renderPicked() {
    const list = [...picked];
    $("picked").textContent = list.length
      ? `Picked: ${list.join(", ")} (${list.length} × ${money(event.price)}).`
      : "No seats picked. Click a seat, or let us choose.";
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
      const places = booking.places.seats ? booking.places.seats.join(", ") : `${booking.places.quantity} place(s)`;
      if (ACTIVE.has(booking.status)) (booking.places.seats || []).forEach((s) => mineSeats.add(s));
      list.append(el("li", {}, el("a", { href: `booking.html?id=${encodeURIComponent(booking.booking_id)}`,
        text: `${places}: ${booking.status.replace(/_/g, " ").toLowerCase()}` })));
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
    const headers = admissionToken ? { "X-Admission-Token": admissionToken } : {};
    $("hold").disabled = $("best").disabled = true;
    try {
      const booking = await api("POST", `/events/${encodeURIComponent(eventId)}/bookings`, { body, key: newKey(), headers });
      Holdfast.rememberBooking(eventId, booking.booking_id);
      location.href = `booking.html?id=${encodeURIComponent(booking.booking_id)}`;
    } catch (error) {
      showError("hold-error", error);
      if (/^admission_/.test(error.code)) {
        // the turn lapsed or belongs to another name: queue again
        admissionToken = null;
        sessionStorage.removeItem(`holdfast.admission.${eventId}`);
        $("room-join").classList.remove("hidden");
        $("room-text").textContent = "Join the queue again to get a new turn.";
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
      if (!picked.size) { showError("hold-error", "Pick at least one seat on the map, or use best available."); return; }
      hold({ seats: [...picked] });
    } else {
      hold({ quantity: Number($("quantity").value) });
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
      text.textContent = `You are number ${entry.position} on the waitlist for ${entry.quantity} place(s). Keep this page open or come back later: when places come back, they are held for you.`;
    } else if (entry.state === "OFFERING") {
      text.textContent = "Your turn has come: we are holding places for you now…";
    } else if (entry.state === "OFFERED" && entry.offer) {
      Holdfast.rememberBooking(eventId, entry.offer.booking_id);
      text.replaceChildren("Your turn came: places are held for you until ", when(entry.offer.hold_expires_at), ". ",
        el("a", { href: `booking.html?id=${encodeURIComponent(entry.offer.booking_id)}`, text: "Pay for them on your booking page" }), ".");
    } else if (entry.state === "PASSED") {
      text.textContent = "Your offer ran out before it was paid, so the places went to the next in line. You can join again.";
    } else if (entry.state === "DONE") {
      text.textContent = "You bought the places you were offered.";
    } else if (entry.state === "SKIPPED") {
      text.textContent = "Your turn was skipped because you already have places for this event, or the places could not be held for you. You can join again.";
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
      const headers = admissionToken ? { "X-Admission-Token": admissionToken } : {};
      renderWaitlist(await api("POST", `/events/${encodeURIComponent(eventId)}/waitlist`, { body: { quantity: Number($("waitlist-n").value) }, headers }));
    } catch (error) { showError("waitlist-error", error); }
  });
  $("waitlist-leave").addEventListener("click", async () => {
    showError("waitlist-error", null);
    try {
      await api("DELETE", `/events/${encodeURIComponent(eventId)}/waitlist`);
      onWaitlist = false;
      $("waitlist-text").textContent = "You left the waitlist.";
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
      text.textContent = `It is your turn: book before ${when(status.token_expires_at)}.`;
      $("room-join").classList.add("hidden");
    } else if (status.status === "waiting") {
      const wait = status.estimated_wait_seconds ? ` About ${Math.ceil(status.estimated_wait_seconds / 60)} minute(s) to go.` : "";
      text.textContent = `You are in the queue: ${status.position} ahead of you, including you.${wait}${status.paused ? " Everything is held right now; the queue moves when places come back." : ""}`;
      $("room-join").classList.add("hidden");
    } else if (status.status === "sold_out") {
      text.textContent = status.message || "Everything is sold.";
    } else if (status.status === "expired") {
      admissionToken = null;
      text.textContent = status.message || "Your turn to book passed unused. Join the queue again.";
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
    if (!eventId) { showError("error", "This page needs an event: open one from the list of events."); return; }
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
