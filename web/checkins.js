"use strict";
// The operator page's live check-ins at an event's doors (GET /events/{event_id}/checkins), a
// section of the page's registry (operator.js), with the organizer key the page saves.
(() => {
  const { api, el, showError, when, words, fill } = Holdfast;
  const { key, count } = HoldfastOperator;
  const T = words({
    en: { title: "Check-ins at the door", event: "Event id", watch: "Watch",
          hint: "Enter the organizer key and an event to watch.",
          total: "{checked} (as of {at})", checked: { one: "{count} checked in", other: "{count} checked in" },
          door: "Door", inside: "Checked in", offline: "Offline", last: "Last", revoked: " (revoked)" },
    ru: { title: "Вход по билетам", event: "Код мероприятия", watch: "Следить",
          hint: "Введите ключ организатора и мероприятие, за которым следить.",
          total: "{checked} (на {at})",
          checked: { one: "{count} человек прошёл", few: "{count} человека прошли", many: "{count} человек прошли",
                     other: "{count} человека прошли" },
          door: "Вход", inside: "Прошли", offline: "Без связи", last: "Последний", revoked: " (отозван)" },
  });
  const watched = () => (sessionStorage.getItem("holdfast.checkinsEvent") || "").trim();
  let box = null;

  async function refresh() {
    const eventId = watched();
    if (!box || !eventId || !key()) return true;
    try {
      const seen = await api("GET", `/events/${encodeURIComponent(eventId)}/checkins`, { organizerKey: key() });
      showError(box.error, null);
      box.total.textContent = fill(T.total, { checked: count(T.checked, seen.checked_in), at: when(seen.as_of) });
      box.doors.replaceChildren(...seen.doors.map((door) => el("tr", {},
        el("td", { "data-label": T.door, text: (door.name || door.door_id) + (door.deleted ? T.revoked : "") }),
        el("td", { "data-label": T.inside, text: String(door.checked_in) }),
        el("td", { "data-label": T.offline, text: String(door.offline) }),
        el("td", { "data-label": T.last, text: door.last_at ? when(door.last_at) : "-" }))));
      box.minutes.replaceChildren(...seen.over_time.slice(-10).map((minute) => el("li", {},
        `${minute.minute.slice(11)} UTC: ${minute.checked_in}`)));
      box.table.classList.remove("hidden");
    } catch (problem) {
      showError(box.error, problem);
    }
    return true;
  }

  HoldfastOperator.section({
    id: "checkins", page: "doors", scope: "doors", order: 35, title: { en: T.title, ru: T.title }, every: 5000,
    build(card) {
      const input = el("input", { id: "checkins-event", autocomplete: "off", value: watched() });
      const watch = el("button", { id: "checkins-watch", type: "button", class: "secondary", text: T.watch });
      box = {
        total: el("p", { id: "checkins-total", class: "muted", "aria-live": "polite", text: T.hint }),
        doors: el("tbody", { id: "checkins-doors" }),
        minutes: el("ol", { id: "checkins-minutes", class: "journal" }),
        error: el("p", { id: "checkins-error", class: "error hidden", role: "alert" }),
      };
      box.table = el("table", { id: "checkins-table", class: "hidden" },
        el("thead", {}, el("tr", {}, el("th", { text: T.door }), el("th", { text: T.inside }),
          el("th", { text: T.offline }), el("th", { text: T.last }))), box.doors);
      watch.addEventListener("click", () => {
        sessionStorage.setItem("holdfast.checkinsEvent", input.value.trim());
        refresh();
      });
      card.append(el("div", { class: "row" }, el("label", {}, T.event, " ", input), watch),
        box.total, box.table, box.minutes, box.error);
    },
    refresh,
  });
})();
