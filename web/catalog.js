"use strict";
(() => {
  const { api, el, showError, money, when } = Holdfast;
  const form = document.getElementById("filters");
  const list = document.getElementById("events");
  const more = document.getElementById("more");
  let cursor = null;

  function query(withCursor) {
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(form)) {
      if (!value.trim()) continue;
      // dates are whole days: "to" includes the day it names
      if (name === "from") params.set(name, `${value}T00:00:00Z`);
      else if (name === "to") params.set(name, `${value}T23:59:59Z`);
      else params.set(name, value.trim());
    }
    params.set("limit", "10");
    if (withCursor && cursor) params.set("cursor", cursor);
    return `/events?${params}`;
  }

  async function load(append) {
    showError("error", null);
    try {
      const page = await api("GET", query(append));
      if (!append) list.replaceChildren();
      for (const event of page.events) {
        list.append(el("li", {}, el("a", { href: `event.html?id=${encodeURIComponent(event.event_id)}` },
          el("strong", { text: event.name }), el("br"),
          el("span", { class: "muted", text: `${when(event.starts_at)} · ${event.venue}, ${event.city} · ${event.category} · ${money(event.price)}` }))));
      }
      cursor = page.next_cursor || null;
      more.classList.toggle("hidden", !cursor);
      document.getElementById("empty").classList.toggle("hidden", list.children.length > 0);
    } catch (error) { showError("error", error); }
  }

  // Appointment services are not in the catalog (there is no listing of them): an organizer's link
  // names them, `index.html?services=<id>,<id>` (as `make run` prints), and each is named by its
  // own availability answer.
  async function services() {
    const ids = (Holdfast.param("services") || "").split(",").map((id) => id.trim()).filter(Boolean).slice(0, 10);
    if (!ids.length) return;
    const box = document.getElementById("services");
    const day = new Date().toISOString().slice(0, 10);
    for (const id of ids) {
      try {
        const service = await api("GET", `/services/${encodeURIComponent(id)}/availability?date=${day}`);
        const kind = service.mode === "group" ? "group session" : "private hire";
        box.append(el("li", {}, el("a", { href: `service.html?id=${encodeURIComponent(id)}` },
          el("strong", { text: service.name }), el("br"),
          el("span", { class: "muted", text: `${kind} · ${money(service.price)}` }))));
      } catch (error) { showError("error", error); }
    }
    document.getElementById("services-card").classList.toggle("hidden", box.children.length === 0);
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); cursor = null; load(false); });
  more.addEventListener("click", () => load(true));
  load(false);
  services();
})();
