"use strict";
// A drive-up's exit payment: the page the exit gate's confirmation_url leads to. The link names the
// lot, the ticket and the payment's own key (whoever holds it sees this payment and nothing else);
// Pay goes on to the provider's page, which returns here, and a paid payment shows its receipt. With
// fiscal receipts on for the lot, the payment waits for the driver's address: the page asks for it
// and POSTs it, which creates the payment (400 contact_required without one).
(() => {
  const { api, showError, money, when, param, every } = Holdfast;
  const $ = (id) => document.getElementById(id);
  const T = Holdfast.words({
    en: {
      title: "Pay for your parking", loading: "Loading…", pay: "Pay", stay: "Your stay", lot: "Car park", plate: "Plate",
      space: "Space", entered: "Entered", until: "Charged until", exited: "Left", amount: "Amount", ticket: "Ticket",
      pageTitle: "Holdfast: pay for your parking",
      pending: "To pay before you leave", paid: "Paid: the barrier opens for you", canceled: "This payment was cancelled",
      pendingHow: "Pay on the payment provider's page; it brings you back here.",
      paidHow: "Drive to the exit: the gate lets your car out. This is your receipt.",
      paidLeft: "You have left the car park. This is your receipt.",
      canceledHow: "Nothing was charged. Ask for a new payment at the exit gate.",
      superseded: "Your stay went on after this payment was asked for: the exit gate shows the newer amount.",
      missing: "This page needs the link the exit gate shows.", noProvider: "The payment page could not be opened. Please try again.",
      contactWhy: "A fiscal receipt is e-mailed to you: give the address to send it to, then pay.",
      contactLabel: "E-mail for the receipt", contactPay: "Pay with this address",
    },
    ru: {
      title: "Оплата парковки", loading: "Загрузка…", pay: "Оплатить", stay: "Ваша стоянка", lot: "Парковка", plate: "Номер",
      space: "Место", entered: "Въезд", until: "Оплачено до", exited: "Выезд", amount: "Сумма", ticket: "Талон",
      pageTitle: "Holdfast: оплата парковки",
      pending: "Оплатите перед выездом", paid: "Оплачено: шлагбаум откроется", canceled: "Этот платёж отменён",
      pendingHow: "Оплатите на странице платёжной системы; она вернёт вас сюда.",
      paidHow: "Подъезжайте к выезду: шлагбаум выпустит машину. Это ваш чек.",
      paidLeft: "Вы выехали с парковки. Это ваш чек.",
      canceledHow: "Деньги не списаны. Запросите новый платёж у шлагбаума на выезде.",
      superseded: "Стоянка продолжилась после запроса этого платежа: у шлагбаума на выезде новая сумма.",
      missing: "Этой странице нужна ссылка, которую показывает шлагбаум на выезде.",
      noProvider: "Не удалось открыть страницу оплаты. Попробуйте ещё раз.",
      contactWhy: "Кассовый чек придёт на электронную почту: укажите адрес для него и оплатите.",
      contactLabel: "Почта для чека", contactPay: "Оплатить с этим адресом",
    },
  });
  const TONES = { pending: "wait", paid: "good", canceled: "bad" };
  document.title = T.pageTitle;
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];
  const lotId = param("lot"), ticketId = param("ticket"), key = param("key");
  let shown = null;

  function render(payment) {
    shown = payment;
    const status = $("status");
    status.textContent = T[payment.state] || payment.state;
    status.className = `status ${TONES[payment.state] || "wait"}`;
    status.dataset.state = payment.state;
    $("explain").textContent = payment.state === "paid" ? (payment.exited_at ? T.paidLeft : T.paidHow)
      : payment.state === "canceled" ? T.canceledHow
      : payment.superseded ? T.superseded : T.pendingHow;
    $("lot").textContent = payment.lot.name || payment.lot.lot_id;
    $("plate").textContent = payment.plate;
    $("space").textContent = payment.space_id;
    $("entered").textContent = when(payment.entered_at);
    $("until").textContent = when(payment.charged_until);
    $("exited-row").classList.toggle("hidden", !payment.exited_at);
    $("exited").textContent = when(payment.exited_at);
    $("amount").textContent = money(payment.amount);
    $("ticket").textContent = payment.ticket_id;
    $("pay").classList.toggle("hidden", !(payment.state === "pending" && payment.confirmation_url && !payment.superseded));
    $("contact").classList.toggle("hidden", !(payment.state === "pending" && payment.contact_required && !payment.superseded));
  }

  const path = () => `/lots/${encodeURIComponent(lotId)}/tickets/${encodeURIComponent(ticketId)}/exit-payment?key=${encodeURIComponent(key)}`;

  async function refresh() {
    try {
      render(await api("GET", path()));
      showError("error", null);
      // a paid payment may still see its car leave; a cancelled one is over
      return shown.state !== "canceled" && !shown.exited_at;
    } catch (error) {
      showError("error", error);
      return error.status !== 404;
    }
  }

  function goToProvider(url) {
    // only ever to a web page: the provider's payment page is http(s)
    if (!/^https?:\/\//i.test(url || "")) { showError("action-error", T.noProvider); return; }
    location.href = url;
  }

  $("pay").addEventListener("click", () => {
    showError("action-error", null);
    goToProvider(shown && shown.confirmation_url);
  });

  $("contact").addEventListener("submit", async (event) => {
    event.preventDefault();
    showError("action-error", null);
    const field = $("contact-email"), address = field.value.trim();
    if (!address || !field.checkValidity()) {
      field.setAttribute("aria-invalid", "true");
      field.focus();
      return;
    }
    field.removeAttribute("aria-invalid");
    $("contact-pay").disabled = true;
    try {
      render(await api("POST", path(), { body: { contact_email: address } }));
      goToProvider(shown.confirmation_url);
    } catch (error) {
      showError("action-error", error);
    } finally { $("contact-pay").disabled = false; }
  });

  if (!lotId || !ticketId || !key) showError("error", T.missing);
  else every(2000, refresh);
})();
