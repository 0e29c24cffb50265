"use strict";
(() => {
  const { api, el, showError, money, when, every, newKey } = Holdfast;
  const $ = (id) => document.getElementById(id);
  const key = () => sessionStorage.getItem("holdfast.organizerKey") || "";
  const operator = () => (localStorage.getItem("holdfast.operator") || "").trim();
  const REASONS = {
    paid_in_time_places_resold: "Paid in time, but the places were resold before the payment was reported",
    amount_mismatch: "The amount paid does not match the booking",
    second_payment_for_booking: "A second payment arrived for this booking",
    reconciliation_stuck: "The payment's outcome could not be settled automatically",
  };

  $("org-key").value = key();
  $("operator").value = operator();
  $("org-save").addEventListener("click", () => {
    sessionStorage.setItem("holdfast.organizerKey", $("org-key").value.trim());
    localStorage.setItem("holdfast.operator", $("operator").value.trim());
    refreshReviews();
    refreshMetrics();
  });
  $("kind").addEventListener("change", () => {
    const seated = $("kind").value === "seated";
    $("rows-label").classList.toggle("hidden", !seated);
    $("capacity-label").classList.toggle("hidden", seated);
  });

  function needKey(box) {
    if (key()) return true;
    showError(box, "Enter the organizer key at the top of the page and press Use.");
    return false;
  }

  // ---------------------------------------------------------------- create and publish
  function parseRows(text) {
    const rows = [];
    for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
      const match = /^([A-Za-z0-9]+)\s*:\s*(\d+)$/.exec(part);
      if (!match) throw new Error(`"${part}" is not a row: write rows as name:seats, for example A:10, B:12.`);
      rows.push({ name: match[1], seats: Number(match[2]) });
    }
    if (!rows.length) throw new Error("Give at least one row, for example A:10.");
    return rows;
  }

  $("create").addEventListener("submit", async (e) => {
    e.preventDefault();
    showError("create-error", null);
    $("create-result").classList.add("hidden");
    if (!needKey("create-error")) return;
    const form = new FormData(e.target);
    let body;
    try {
      const starts = new Date(form.get("starts_at"));
      if (isNaN(starts)) throw new Error("Give the date and time the event starts.");
      body = {
        name: form.get("name"), venue: form.get("venue"), city: form.get("city"), category: form.get("category"),
        starts_at: starts.toISOString(), price: { value: Number(form.get("price")).toFixed(2), currency: form.get("currency").toUpperCase() },
        hold_ttl_seconds: Number(form.get("hold")),
      };
      if (form.get("kind") === "seated") body.seat_map = { rows: parseRows(form.get("rows")) };
      else body.capacity = Number(form.get("capacity"));
    } catch (error) { showError("create-error", error); return; }
    try {
      const event = await api("POST", "/events", { body, key: newKey(), organizerKey: key() });
      let published = false;
      if (form.get("publish")) {
        await api("POST", `/events/${encodeURIComponent(event.event_id)}/publish`, { organizerKey: key() });
        published = true;
      }
      const result = $("create-result");
      result.replaceChildren(`Created "${event.name}" with ${event.capacity} places${published ? " and published it" : " (not published yet)"}. `,
        el("a", { href: `event.html?id=${encodeURIComponent(event.event_id)}`, text: "Open its page" }), ".");
      result.classList.remove("hidden");
      refreshSales();
    } catch (error) { showError("create-error", error); }
  });

  // ---------------------------------------------------------------- live sales
  async function refreshSales() {
    // only the signed-in organizer's own offerings (GET /admin/sales), each with its live counts
    let offerings = [];
    try {
      offerings = (await api("GET", "/admin/sales", { organizerKey: key() })).offerings;
    } catch (_) { /* no key yet, or a wrong one: the table stays empty */ }
    const rows = offerings.filter((event) => event.counts).slice(0, 30).map((event) => {
      const id = event.event_id;
      return el("tr", { "data-event": id },
        el("td", {}, el("strong", { text: event.name }), el("br"), el("span", { class: "muted", text: when(event.starts_at) })),
        el("td", { "data-label": "Available", text: event.counts.available }),
        el("td", { "data-label": "Held", text: event.counts.held }),
        el("td", { "data-label": "Sold", text: event.counts.sold }),
        el("td", {}, el("a", { href: `event.html?id=${encodeURIComponent(id)}`, text: "Page" })));
    });
    $("sales").replaceChildren(...rows);
  }

  // ---------------------------------------------------------------- sale metrics
  // On AWS they are CloudWatch metrics: the page links the stack's dashboard (config
  // metricsDashboardUrl). Locally the API stand-in answers GET /_local/metrics with what
  // `python -m devstack.admin metrics` prints; there is no such route on AWS (docs/web-pages.md).
  const METRICS = [
    ["Holds made", (m) => sum(m, "HoldsMade")],
    ["Sold-out answers", (m) => sum(m, "SoldOutAnswers")],
    ["Confirmations", (m) => sum(m, "Confirmations")],
    ["Late payments: places taken again", (m) => sum(m, "LatePaymentsRetaken")],
    ["Late payments: refunded", (m) => sum(m, "LatePaymentsRefunded")],
    ["Late payments: to review", (m) => sum(m, "LatePaymentsToReview")],
    ["Reviews opened / resolved", (m) => `${sum(m, "ReviewsOpened")} / ${sum(m, "ReviewsResolved")}`],
    ["Holds released at their deadline", (m) => sum(m, "HoldsExpired")],
    ["Expiry lag, worst", (m) => (m.ExpiryLagSeconds && m.ExpiryLagSeconds.samples
      ? `${m.ExpiryLagSeconds.max.toFixed(1)} s (average ${(m.ExpiryLagSeconds.sum / m.ExpiryLagSeconds.samples).toFixed(1)} s)` : "-")],
  ];
  function sum(metrics, name) { return metrics[name] ? metrics[name].sum : 0; }

  const dashboard = (window.HOLDFAST_CONFIG || {}).metricsDashboardUrl;
  if (dashboard) {
    $("metrics-dashboard-link").href = dashboard;
    $("metrics-dashboard").classList.remove("hidden");
    $("metrics-where").textContent = "Holds, sold-out answers, confirmations, late payments, reviews and expiry lag are CloudWatch metrics of the deployment.";
  }

  async function refreshMetrics() {
    if (dashboard || !key()) return;
    try {
      const { metrics } = await api("GET", "/_local/metrics?minutes=60", { organizerKey: key() });
      showError("metrics-error", null);
      $("metrics").replaceChildren(...METRICS.map(([label, value]) =>
        el("tr", {}, el("td", { text: label }), el("td", { "data-label": "Last hour", text: String(value(metrics)) }))));
      $("metrics-table").classList.remove("hidden");
      $("metrics-where").textContent = "From the local stack's logs, as python -m holdfast.cli metrics reads them.";
    } catch (error) { showError("metrics-error", error); }
  }

  // ---------------------------------------------------------------- reviews
  const shown = new Map();   // booking id -> card

  function journalList(entries) {
    return el("ol", { class: "journal" }, entries.map((entry) => el("li", {},
      el("time", { datetime: entry.at, text: when(entry.at) }),
      `${entry.action.replace(/_/g, " ")} (${entry.actor}${entry.ids && entry.ids.operator ? `: ${entry.ids.operator}` : ""}): ${entry.decision}`)));
  }

  function reviewCard(booking) {
    const review = booking.review || {};
    const payment = booking.payment || {};
    const places = booking.places.seats ? `seats ${booking.places.seats.join(", ")}` : `${booking.places.quantity} place(s)`;
    const error = el("p", { class: "error hidden", role: "alert" });
    const result = el("p", { class: "notice hidden", "aria-live": "polite" });
    const action = el("select", { "aria-label": "Decision" },
      el("option", { value: "refund", text: "Refund the payment" }),
      el("option", { value: "confirm", text: "Confirm the booking" }),
      el("option", { value: "close", text: "Close (nothing owed)" }));
    const note = el("textarea", { rows: "2", cols: "40", "aria-label": "Note", placeholder: "Why (kept in the journal, never shown to the customer)" });
    const journal = el("div", {}, el("p", { class: "muted", text: "Loading the journal…" }));
    const button = el("button", { type: "button", text: "Record decision" });
    button.addEventListener("click", async () => {
      showError(error, null);
      if (!needKey(error)) return;
      if (!operator()) { showError(error, "Enter your name at the top of the page and press Use: every decision records who took it."); return; }
      if (!note.value.trim()) { showError(error, "Write a note: it explains the decision to whoever reads the journal later."); note.focus(); return; }
      button.disabled = true;
      try {
        const after = await api("POST", `/admin/reviews/${encodeURIComponent(booking.booking_id)}/resolve`,
          { body: { action: action.value, operator: operator(), note: note.value.trim() }, organizerKey: key() });
        result.textContent = `Done: the booking is now ${after.status.replace(/_/g, " ").toLowerCase()}.`;
        result.classList.remove("hidden");
        loadJournal(booking.booking_id, journal);
      } catch (e) { showError(error, e); }
      finally { button.disabled = false; }
    });
    const card = el("article", { class: "card review", "data-booking": booking.booking_id },
      el("h3", { text: `${REASONS[review.reason] || review.reason || "Needs a decision"}` }),
      el("p", {}, `Booking ${booking.booking_id}: ${places}, ${money(booking.amount)}. `,
        payment.payment_id ? `Payment ${payment.payment_id}: ${payment.status || "outcome unknown"}` : "No payment",
        payment.refund ? `; refund ${payment.refund.status}` : "", "."),
      review.next_step ? el("p", { class: "muted", text: `The customer is told: ${review.next_step}` }) : null,
      el("details", {}, el("summary", { text: "Journal" }), journal),
      el("div", { class: "row" }, el("label", {}, "Decision", action), el("label", {}, "Note", note), button),
      error, result);
    loadJournal(booking.booking_id, journal);
    return card;
  }

  async function loadJournal(bookingId, target) {
    try {
      const full = await api("GET", `/admin/bookings/${encodeURIComponent(bookingId)}`, { organizerKey: key() });
      target.replaceChildren(el("p", { class: "muted", text: `Customer ${full.customer_id || ""}` }), journalList(full.journal || []));
    } catch (error) { target.replaceChildren(el("p", { class: "error", text: error.message })); }
  }

  async function refreshReviews() {
    if (!key()) return;
    try {
      const { reviews } = await api("GET", "/admin/reviews", { organizerKey: key() });
      showError("error", null);
      const list = $("reviews");
      const open = new Set(reviews.map((b) => b.booking_id));
      for (const booking of reviews) {
        if (!shown.has(booking.booking_id)) {
          const card = reviewCard(booking);
          shown.set(booking.booking_id, card);
          list.append(card);
        }
      }
      // a resolved case stays on screen with its outcome until the next visit
      $("reviews-empty").classList.toggle("hidden", shown.size > 0 || open.size > 0);
    } catch (error) { showError("error", error); }
  }

  every(2000, refreshSales);
  every(3000, refreshReviews);
  every(5000, refreshMetrics);
})();
