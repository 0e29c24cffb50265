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

// The open check-in cases (GET /admin/reviews, checkin_cases): a door let someone in offline and the
// backend could not admit the pass when it synced (two doors admitted one ticket, a pass dated ahead,
// a void or unknown ticket). Both people are inside: an operator records what was done
// (POST /admin/checkin-cases/{id}/resolve, scope doors). Listed with the reviews (scope reviews).
(() => {
  const { api, el, showError, when, words, fill } = Holdfast;
  const { key, journalList, holds } = HoldfastOperator;
  const T = words({
    en: { title: "Check-in cases at the doors", none: "None right now.", resolution: "Resolution", note: "Note",
          why: "Why (kept in the case's journal)", record: "Record decision", resolvedAs: "Resolved: {resolution}.",
          acknowledged: "Acknowledged (let in, nothing to undo)", dismissed: "Dismissed (not a real case)",
          needsDoors: "This key may read the case but not resolve it: resolving needs the scope doors.",
          ticket: "ticket {ticket}", door: "door {door}", firstDoor: "first admitted at door {door} {when}",
          passAt: "let in {when}", opened: "opened {when}", event: "event {event}", unknownTicket: "unknown ticket",
          double_checkin: "The same ticket was let in at two doors", pass_time_in_future: "A pass dated in the future",
          ticket_void: "A void ticket was let in", bad_token: "An unreadable ticket was let in",
          door_deleted: "A pass from a door that was removed", other: "A pass the backend refused" },
    ru: { title: "Случаи на входах", none: "Сейчас таких нет.", resolution: "Решение", note: "Примечание",
          why: "Почему (остаётся в журнале случая)", record: "Записать решение", resolvedAs: "Решено: {resolution}.",
          acknowledged: "Принято к сведению (впустили, отменять нечего)", dismissed: "Отклонено (не настоящий случай)",
          needsDoors: "Этому ключу случай виден, но решить его нельзя: нужно право doors.",
          ticket: "билет {ticket}", door: "вход {door}", firstDoor: "впервые прошёл через вход {door} {when}",
          passAt: "впустили {when}", opened: "открыт {when}", event: "мероприятие {event}", unknownTicket: "билет не распознан",
          double_checkin: "Один билет впустили через два входа", pass_time_in_future: "Проход с датой в будущем",
          ticket_void: "Впустили по недействительному билету", bad_token: "Впустили по нечитаемому билету",
          door_deleted: "Проход через удалённый вход", other: "Проход, который сервер не принял" },
  });
  //: what a check-in case is closed as (products/events/services/doors.py RESOLUTIONS)
  const RESOLUTIONS = ["acknowledged", "dismissed"];
  const shown = new Map();   // case id -> card
  let list, empty, error;

  function caseCard(found) {
    const failure = el("p", { class: "error hidden", role: "alert" });
    const result = el("p", { class: "notice hidden", "aria-live": "polite" });
    const choice = el("select", { "aria-label": T.resolution }, ...RESOLUTIONS.map((r) => el("option", { value: r, text: T[r] })));
    const note = el("textarea", { rows: "2", cols: "40", "aria-label": T.note, placeholder: T.why });
    const journal = el("div", {});
    const showJournal = async (entries) => journal.replaceChildren(await journalList(entries || []));
    const facts = [
      found.ticket_id ? fill(T.ticket, { ticket: found.ticket_id }) : T.unknownTicket,
      fill(T.event, { event: found.event_id }),
      found.door_id ? fill(T.door, { door: found.door_id }) : null,
      found.at ? fill(T.passAt, { when: when(found.at) }) : null,
      found.first_door_id ? fill(T.firstDoor, { door: found.first_door_id, when: when(found.first_checked_in_at) }) : null,
      fill(T.opened, { when: when(found.opened_at) }),
    ].filter(Boolean).join(" · ");
    const button = el("button", { type: "button", text: T.record });
    const controls = el("div", { class: "row" }, el("label", {}, T.resolution, choice), el("label", {}, T.note, note), button);
    const cannot = el("p", { class: "muted hidden", text: T.needsDoors });
    const card = el("article", { class: "card review", "data-checkin-case": found.case_id, "data-status": found.status },
      el("h3", { text: T[found.reason] || T.other }),
      el("p", {}, facts),
      el("details", {}, el("summary", { text: HoldfastOperator.T.journal }), journal),
      controls, cannot, failure, result);
    HoldfastOperator.resolveCase(button, { path: `/admin/checkin-cases/${encodeURIComponent(found.case_id)}/resolve`,
                                           choice, note, failure, result, controls, card, showJournal, words: T });
    // the key's rights are learned after it is used: looked at again on every refresh
    card.showRights = () => {
      const open = card.dataset.status === "OPEN";
      controls.classList.toggle("hidden", !open || !holds("doors"));
      cannot.classList.toggle("hidden", !open || holds("doors"));
    };
    card.showRights();
    showJournal(found.journal);
    return card;
  }

  HoldfastOperator.section({
    id: "checkin-cases", page: "reviews", scope: "reviews", order: 85, title: { en: T.title, ru: T.title }, every: 3000,
    build(card) {
      empty = el("p", { id: "checkin-cases-empty", class: "muted", text: T.none });
      list = el("div", { id: "checkin-cases" });
      error = el("p", { id: "checkin-cases-error", class: "error hidden", role: "alert" });
      card.append(error, empty, list);
    },
    async refresh() {
      if (!key()) return;
      try {
        const { checkin_cases: cases } = await api("GET", "/admin/reviews", { organizerKey: key() });
        showError(error, null);
        for (const found of cases || []) {
          if (!shown.has(found.case_id)) {
            const card = caseCard(found);
            shown.set(found.case_id, card);
            list.append(card);
          }
        }
        for (const card of shown.values()) card.showRights();
        // a resolved case stays on screen with its resolution until the next visit
        empty.classList.toggle("hidden", shown.size > 0);
      } catch (problem) { showError(error, problem); }
    },
  });
})();
