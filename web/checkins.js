"use strict";
// The operator page's live check-ins at an event's doors (GET /events/{event_id}/checkins), kept
// apart from operator.js: it reads the same organizer key the page saves.
(() => {
  const { api, el, showError, when, every } = Holdfast;
  const $ = (id) => document.getElementById(id);
  const key = () => sessionStorage.getItem("holdfast.organizerKey") || "";
  const watched = () => (sessionStorage.getItem("holdfast.checkinsEvent") || "").trim();

  $("checkins-event").value = watched();
  $("checkins-watch").addEventListener("click", () => {
    sessionStorage.setItem("holdfast.checkinsEvent", $("checkins-event").value.trim());
    refresh();
  });

  async function refresh() {
    const eventId = watched();
    if (!eventId || !key()) return true;
    try {
      const seen = await api("GET", `/events/${encodeURIComponent(eventId)}/checkins`, { organizerKey: key() });
      showError("checkins-error", null);
      $("checkins-total").textContent = `${seen.checked_in} checked in (as of ${when(seen.as_of)})`;
      $("checkins-doors").replaceChildren(...seen.doors.map((door) => el("tr", {},
        el("td", { text: (door.name || door.door_id) + (door.deleted ? " (revoked)" : "") }),
        el("td", { text: String(door.checked_in) }), el("td", { text: String(door.offline) }),
        el("td", { text: door.last_at ? when(door.last_at) : "-" }))));
      const recent = seen.over_time.slice(-10);
      $("checkins-minutes").replaceChildren(...recent.map((minute) => el("li", {},
        `${minute.minute.slice(11)} UTC: ${minute.checked_in}`)));
      $("checkins-table").classList.remove("hidden");
    } catch (error) {
      showError("checkins-error", error);
    }
    return true;
  }

  every(5000, refresh);
})();
