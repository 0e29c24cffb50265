"use strict";
// The page a transfer's link leads a browser to (issue 45): it shows what is offered and changes
// nothing until the signed-in reader presses Accept, which POSTs the link's token to the API. The
// token in the address is the authority: the page never sends it anywhere but there.
(() => {
  const { api, showError, when, param, customer } = Holdfast;
  const $ = (id) => document.getElementById(id);
  const T = Holdfast.words({
    en: {
      title: "A booking offered to you", loading: "Loading…", what: "What", when: "When", until: "Accept before",
      accept: "Accept the booking", open: "Open your booking", pageTitle: "Holdfast: a booking offered to you",
      pending: "Waiting for you to accept", accepted: "Accepted", expired: "This link has expired",
      invalid: "This link does not work",
      pendingHow: "Once you accept, the booking and its tickets are yours, and the tickets issued before stop working.",
      acceptedHow: "The booking was accepted. If it was you, open it from your bookings.",
      expiredHow: "Ask the person who sent it for a new link.",
      invalidHow: "It was withdrawn, replaced or mistyped. Ask the person who sent it for a new link.",
      signIn: "Sign in first (at the top of the page), then accept.",
      missing: "This page needs the link from the message you received.",
      contactRequired: "This booking's receipts are e-mailed to whoever holds it, and your account has no confirmed e-mail address yet. Confirm one, then accept again: the link still works.",
    },
    ru: {
      title: "Вам передают бронь", loading: "Загрузка…", what: "Что", when: "Когда", until: "Принять до",
      accept: "Принять бронь", open: "Открыть бронь", pageTitle: "Holdfast: вам передают бронь",
      pending: "Ждёт вашего согласия", accepted: "Принято", expired: "Срок ссылки истёк",
      invalid: "Ссылка не действует",
      pendingHow: "После согласия бронь и её билеты станут вашими, а выданные раньше билеты перестанут действовать.",
      acceptedHow: "Бронь уже принята. Если это были вы, откройте её в своих бронях.",
      expiredHow: "Попросите отправителя прислать новую ссылку.",
      invalidHow: "Её отозвали, заменили или в ней опечатка. Попросите отправителя прислать новую ссылку.",
      signIn: "Сначала войдите (вверху страницы), затем примите бронь.",
      missing: "Этой странице нужна ссылка из полученного письма.",
      contactRequired: "Чеки по этой брони приходят на почту её владельца, а у вашей учётной записи пока нет подтверждённой почты. Подтвердите её и примите бронь снова: ссылка по-прежнему действует.",
    },
  });
  const TONES = { pending: "wait", accepted: "good", expired: "bad", invalid: "bad" };
  document.title = T.pageTitle;
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];
  const bookingId = param("booking"), token = param("token");
  const path = () => `/bookings/${encodeURIComponent(bookingId)}/transfer/accept?token=${encodeURIComponent(token)}`;

  function render(offer) {
    const status = $("status");
    status.textContent = T[offer.state] || offer.state;
    status.className = `status ${TONES[offer.state] || "wait"}`;
    status.dataset.state = offer.state;
    $("explain").textContent = T[`${offer.state}How`] || "";
    $("offer").classList.toggle("hidden", !offer.name);
    $("name").textContent = offer.name || "";
    $("starts").textContent = offer.starts_at ? when(offer.starts_at) : "";
    $("until").textContent = offer.expires_at ? when(offer.expires_at) : "";
    $("accept").classList.toggle("hidden", offer.state !== "pending");
  }

  $("accept").addEventListener("click", async () => {
    showError("action-error", null);
    if (!customer() && Holdfast.config.identity !== "authorizer") { showError("action-error", T.signIn); return; }
    $("accept").disabled = true;
    try {
      const booking = await api("POST", path());
      render({ state: "accepted" });
      $("explain").textContent = "";
      const open = $("open");
      open.href = `booking.html?id=${encodeURIComponent(booking.booking_id)}`;
      open.classList.remove("hidden");
    } catch (error) {
      // contact_required: the booking's receipts need the taker's confirmed address (the API's own
      // sentence is English; this one is in the reader's language and says the link still works)
      showError("action-error", error.status === 401 ? T.signIn : error.code === "contact_required" ? T.contactRequired
        : error);
    } finally { $("accept").disabled = false; }
  });

  if (!bookingId || !token) showError("error", T.missing);
  else api("GET", path()).then(render).catch((error) => {
    if (error.status === 400) render({ state: "invalid" }); else showError("error", error);
  });
})();
