"""What customers are told, in every language the API speaks: one source for the API's own
sentences (``hold_next_step``, a review's ``next_step``; the errors a customer meets in the
other languages) and for the web pages, which read the same table from ``GET /texts`` instead of writing
their own. A page that explains what the engine does therefore says what the engine says.

``{name}`` marks a value filled in where the text is used: the API puts the raw value (an ISO
time), a page the value formatted for its reader (``Intl``). Every language has every key
(tests/unit/test_customer_texts.py); English is the default.
"""
from __future__ import annotations

from typing import Any

from .languages import DEFAULT as DEFAULT_LANGUAGE, SUPPORTED as LANGUAGES

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "hold_next_step": (
            "Your places are held until {until}. Pay before then to confirm the booking; after that they are "
            "released to other customers. A payment that reaches us later confirms the booking if the places "
            "are still free; otherwise you are offered other places where there are any, or your money back."),
        "hold_ended": (
            "Time is up: the places are being released. A payment that reaches us now still confirms the "
            "booking if the places are free; otherwise you are offered other places where there are any, or "
            "your money back."),
        "hold_next_step.refund_only": (
            "Your places are held until {until}. Pay before then to confirm the booking; after that they are "
            "released to other customers. A payment that reaches us later confirms the booking if the places "
            "are still free; otherwise your money is given back."),
        "hold_ended.refund_only": (
            "Time is up: the places are being released. A payment that reaches us now still confirms the "
            "booking if the places are free; otherwise your money is given back."),
        "cancel.refund": "Cancelling refunds your payment in full.",
        "cancel.refund_until": (
            "Cancelled before {until}, your payment is refunded in full; later, nothing is given back."),
        "cancel.no_refund": "Cancelling now gives nothing back: under this booking's terms the payment is kept.",
        "cancel.refund_part": (
            "Cancelling now refunds {amount} of what was paid (not all of it: the organizer's cancellation "
            "terms, or a difference already returned); the money goes back to the payment the booking was bought with."),
        "cancel.nothing_paid": "Cancelling gives the places back; nothing was paid for them, so nothing is refunded.",
        "cancel.checked_in": "Someone already came in on this booking, so it can no longer be cancelled here; ask the organizer.",
        "review.paid_in_time_places_resold": (
            "You paid in time but your places were released before we heard from the payment provider. Our team "
            "will offer you other places or a full refund within one working day."),
        "review.places_taken_alternatives_offered": (
            "Your payment arrived after your hold ended and the places went to someone else. Choose one of the "
            "alternatives listed with your booking, or ask for your money back; if you do not choose in time, "
            "it is returned."),
        "review.amount_mismatch": (
            "The amount paid does not match your booking. Our team will check it and contact you; no further "
            "payment is needed."),
        "review.second_payment_for_booking": (
            "We received a second payment for this booking. Our team will refund the extra payment."),
        "review.refund": (
            "Your refund could not be completed automatically. Our team will complete it within one working day."),
        "review.line_refund": (
            "The refund of a part of your order could not be completed automatically. Our team will complete it "
            "within one working day; the rest of your order stands."),
        "review.default": "Our team is checking this booking and will contact you within one working day.",
    },
    "ru": {
        "hold_next_step": (
            "Места закреплены за вами до {until}. Оплатите до этого времени, чтобы подтвердить бронирование; "
            "после этого места снова поступят в продажу. Если оплата дойдёт до нас позже, бронирование "
            "подтвердится, если места ещё свободны; если нет, мы предложим другие места, когда они есть, "
            "или вернём деньги."),
        "hold_ended": (
            "Время вышло: места освобождаются. Если оплата дойдёт до нас сейчас, бронирование подтвердится, "
            "если места ещё свободны; если нет, мы предложим другие места, когда они есть, или вернём деньги."),
        "hold_next_step.refund_only": (
            "Места закреплены за вами до {until}. Оплатите до этого времени, чтобы подтвердить бронирование; "
            "после этого места снова поступят в продажу. Если оплата дойдёт до нас позже, бронирование "
            "подтвердится, если места ещё свободны; если нет, мы вернём деньги."),
        "hold_ended.refund_only": (
            "Время вышло: места освобождаются. Если оплата дойдёт до нас сейчас, бронирование подтвердится, "
            "если места ещё свободны; если нет, мы вернём деньги."),
        "cancel.refund": "При отмене оплата возвращается полностью.",
        "cancel.refund_until": (
            "При отмене до {until} оплата возвращается полностью; позже деньги не возвращаются."),
        "cancel.no_refund": "Если отменить сейчас, деньги не вернутся: таковы условия этого бронирования.",
        "cancel.refund_part": (
            "При отмене сейчас вернётся {amount} из оплаченного (не всё: так по условиям организатора или часть "
            "уже возвращена); деньги вернутся на тот платёж, которым бронирование было оплачено."),
        "cancel.nothing_paid": "При отмене места освободятся; за них ничего не платили, поэтому возвращать нечего.",
        "cancel.checked_in": "По этому бронированию уже прошли на вход, поэтому отменить его здесь нельзя; обратитесь к организатору.",
        "review.paid_in_time_places_resold": (
            "Вы оплатили вовремя, но места освободились раньше, чем пришёл ответ платёжной системы. В течение "
            "одного рабочего дня мы предложим вам другие места или полный возврат денег."),
        "review.places_taken_alternatives_offered": (
            "Оплата пришла после окончания брони, и места достались другому покупателю. Выберите один из "
            "вариантов, указанных в бронировании, или попросите вернуть деньги; если не выбрать вовремя, "
            "деньги вернутся."),
        "review.amount_mismatch": (
            "Оплаченная сумма не совпадает с суммой бронирования. Мы проверим платёж и свяжемся с вами; "
            "доплачивать ничего не нужно."),
        "review.second_payment_for_booking": "За это бронирование пришёл второй платёж. Мы вернём лишний платёж.",
        "review.refund": "Возврат не удалось провести автоматически. Мы завершим его в течение одного рабочего дня.",
        "review.line_refund": (
            "Возврат за часть заказа не удалось провести автоматически. Мы завершим его в течение одного рабочего "
            "дня; остальная часть заказа в силе."),
        "review.default": "Мы проверяем это бронирование и свяжемся с вами в течение одного рабочего дня.",
    },
}


#: What each journal entry means, by its action, for the pages that show a booking's history (the
#: customer's booking page, the operator's journal). The entry's own ``decision`` is the engine's
#: record, in English, with the specifics (amounts, ids, an operator's note); these name the step
#: in the reader's language. Joined to TEXTS as "journal.<action>". The core's steps only: a
#: product's own (a car passing a gate, a gate case) would need the product to contribute texts,
#: which the customer texts cannot take yet; the pages show those steps' English record.
JOURNAL: dict[str, dict[str, str]] = {
    "en": {
        "transfer_offered": "Offered to someone else", "transfer_withdrawn": "The offer was taken back",
        "transfer_accepted": "Given to another customer; new tickets", "exchanged": "Moved to other places; new tickets",
        "exchange_refund_requested": "Difference of the exchange: refund asked for",
        "exchange_refund_pending": "Difference of the exchange: refund on its way",
        "exchange_refund_succeeded": "Difference of the exchange returned to your payment",
        "exchange_refund_canceled": "Difference of the exchange: refund refused by the provider",
        "exchange_refund_rejected": "Difference of the exchange: refund refused; the organizer settles it",
        "exchange_difference_held": "New places held until the difference is paid",
        "exchange_difference_payment_created": "Payment page for the difference ready",
        "exchange_difference_unknown": "Payment for the difference: no answer yet, asked again",
        "exchange_difference_seen": "Payment for the difference: status received",
        "exchange_difference_checked": "Payment for the difference checked",
        "exchange_difference_failed": "Difference not paid; the booking stays as it was",
        "exchange_difference_lapsed": "Difference not paid in time; the booking stays as it was",
        "exchange_difference_refunding": "Difference paid but the change could not be made: refund asked for",
        "exchange_difference_refunded": "Difference returned to its payment",
        "exchange_difference_refund_rejected": "Difference: refund refused; the organizer settles it",
        "line_refund_rejected": "Part of the order: refund refused; an operator settles it",
        "hold_created": "Places held", "comp_confirmed": "Nothing to pay; confirmed", "comp_cancelled": "Cancelled; nothing was paid", "event_cancelled_comp_released": "Event cancelled; places released", "hold_expired": "Hold ran out; places released",
        "payment_requested": "Payment started", "payment_retried": "Payment started again",
        "payment_created": "Payment page ready", "payment_succeeded": "Paid while held; places sold",
        "payment_captured": "Payment taken; places sold", "payment_not_found_at_provider": "No payment found at the provider",
        "reconciliation_check": "Payment outcome checked", "cancelled_after_payment": "Cancelled after paying; money to be returned",
        "cancelled_after_time_change": "Cancelled after the time changed; money to be returned",
        "payment_rejected": "Payment refused by the provider", "payment_canceled": "Payment cancelled",
        "payment_cancel_recorded": "Payment cancellation recorded", "payment_outcome_unknown": "Payment outcome being checked",
        "payment_found_by_same_key": "Payment found at the provider", "payment_found_by_metadata": "Payment found at the provider",
        "places_secured_for_capture": "Places secured; taking the payment",
        "authorisation_cancelled": "Card authorisation released", "authorisation_voided": "Card authorisation voided",
        "late_payment_places_retaken": "Late payment; places still free and taken again",
        "late_payment_refund_started": "Late payment; places gone, money being returned",
        "late_authorisation_places_retaken": "Late card authorisation; places taken again",
        "late_authorisation_cancelled": "Late card authorisation released",
        "payment_after_cancel_refund_started": "Payment after cancelling; money being returned",
        "cancelled_by_customer": "Cancelled by you", "cancelled_without_refund": "Cancelled; nothing to return",
        "cancelled_by_organizer": "Cancelled by the organizer; money to be returned",
        "refund_succeeded": "Money returned", "refund_canceled": "Refund refused by the provider",
        "resolution_refund_started": "Money back chosen; being returned", "alternative_chosen": "Other places chosen",
        "conflict_case_opened": "Places went to someone else; alternatives offered",
        "manual_review_opened": "Sent to our team for a check", "review_confirmed": "Checked by our team; confirmed",
        "review_places_pinned": "Checked by our team; places secured", "review_capture_failed": "Checked by our team; payment not taken",
        "review_closed": "Checked by our team; closed", "review_refund_started": "Checked by our team; money being returned",
        "reconciliation_restarted": "Payment check restarted", "reconciliation_limit_reached": "Payment check gave up; sent to our team",
        "event_cancelled_hold_released": "Event cancelled; hold released", "event_cancelled_refund_started": "Event cancelled; money being returned",
        "event_cancelled_review_kept": "Event cancelled; kept for our team", "timer_fired": "Deadline reached",
        "personal_data_erased": "Personal data erased",
        "end_moved": "End moved with its event",
        "settlement_rescheduled": "Start moved; the closing receipt waits for it",
        "settlement_requested": "Service rendered; closing receipt being issued",
        "settlement_receipt_sent": "Closing receipt e-mailed to your contact address",
        "settlement_retry_scheduled": "Closing receipt delayed; trying again",
        "settlement_receipt_failed": "Closing receipt could not be issued; sent to the organizer",
        "settlement_receipt_registered": "Closing receipt registered by the tax register",
        "settlement_receipt_pending": "Closing receipt not registered yet; looking again",
        "settlement_receipt_canceled": "Closing receipt cancelled by the register; issued again",
    },
    "ru": {
        "transfer_offered": "Предложено другому", "transfer_withdrawn": "Предложение отозвано",
        "transfer_accepted": "Передано другому покупателю; билеты новые", "exchanged": "Перенесено на другие места; билеты новые",
        "exchange_refund_requested": "Разница при обмене: возврат запрошен",
        "exchange_refund_pending": "Разница при обмене: возврат в пути",
        "exchange_refund_succeeded": "Разница при обмене возвращена на ваш платёж",
        "exchange_refund_canceled": "Разница при обмене: платёжная система отклонила возврат",
        "exchange_refund_rejected": "Разница при обмене: возврат отклонён; организатор решит вопрос",
        "exchange_difference_held": "Новые места держатся, пока не оплачена разница",
        "exchange_difference_payment_created": "Страница оплаты разницы готова",
        "exchange_difference_unknown": "Оплата разницы: ответа пока нет, запрошено снова",
        "exchange_difference_seen": "Оплата разницы: статус получен",
        "exchange_difference_checked": "Оплата разницы проверена",
        "exchange_difference_failed": "Разница не оплачена; бронирование осталось прежним",
        "exchange_difference_lapsed": "Разница не оплачена вовремя; бронирование осталось прежним",
        "exchange_difference_refunding": "Разница оплачена, но замена невозможна: возврат запрошен",
        "exchange_difference_refunded": "Разница возвращена на её платёж",
        "exchange_difference_refund_rejected": "Разница: возврат отклонён; организатор решит вопрос",
        "line_refund_rejected": "Часть заказа: возврат отклонён; оператор решит вопрос",
        "hold_created": "Места забронированы", "comp_confirmed": "Платить не нужно; подтверждено", "comp_cancelled": "Отменено; оплаты не было", "event_cancelled_comp_released": "Событие отменено; места освобождены", "hold_expired": "Бронь истекла, места освобождены",
        "payment_requested": "Оплата начата", "payment_retried": "Оплата начата снова",
        "payment_created": "Страница оплаты готова", "payment_succeeded": "Оплачено во время брони; места проданы",
        "payment_captured": "Оплата списана; места проданы", "payment_not_found_at_provider": "В платёжной системе платежа нет",
        "reconciliation_check": "Исход оплаты проверен", "cancelled_after_payment": "Отменено после оплаты; деньги вернутся",
        "cancelled_after_time_change": "Отменено после переноса времени; деньги вернутся",
        "payment_rejected": "Платёжная система отклонила оплату", "payment_canceled": "Оплата отменена",
        "payment_cancel_recorded": "Отмена оплаты записана", "payment_outcome_unknown": "Проверяем исход оплаты",
        "payment_found_by_same_key": "Платёж найден в платёжной системе", "payment_found_by_metadata": "Платёж найден в платёжной системе",
        "places_secured_for_capture": "Места закреплены, списываем оплату",
        "authorisation_cancelled": "Блокировка на карте снята", "authorisation_voided": "Блокировка на карте аннулирована",
        "late_payment_places_retaken": "Оплата пришла поздно; места ещё свободны и снова ваши",
        "late_payment_refund_started": "Оплата пришла поздно; мест нет, деньги возвращаются",
        "late_authorisation_places_retaken": "Поздняя блокировка на карте; места снова ваши",
        "late_authorisation_cancelled": "Поздняя блокировка на карте снята",
        "payment_after_cancel_refund_started": "Оплата после отмены; деньги возвращаются",
        "cancelled_by_customer": "Отменено вами", "cancelled_without_refund": "Отменено; возвращать нечего",
        "cancelled_by_organizer": "Отменено организатором; деньги вернутся",
        "refund_succeeded": "Деньги возвращены", "refund_canceled": "Платёжная система отклонила возврат",
        "resolution_refund_started": "Выбран возврат; деньги возвращаются", "alternative_chosen": "Выбраны другие места",
        "conflict_case_opened": "Места достались другому; предложены варианты",
        "manual_review_opened": "Передано нашей команде на проверку", "review_confirmed": "Проверено нашей командой; подтверждено",
        "review_places_pinned": "Проверено нашей командой; места закреплены", "review_capture_failed": "Проверено нашей командой; оплата не списана",
        "review_closed": "Проверено нашей командой; закрыто", "review_refund_started": "Проверено нашей командой; деньги возвращаются",
        "reconciliation_restarted": "Проверка оплаты начата заново", "reconciliation_limit_reached": "Проверка оплаты не удалась; передано нашей команде",
        "event_cancelled_hold_released": "Мероприятие отменено; бронь снята", "event_cancelled_refund_started": "Мероприятие отменено; деньги возвращаются",
        "event_cancelled_review_kept": "Мероприятие отменено; оставлено для нашей команды", "timer_fired": "Наступил срок",
        "personal_data_erased": "Личные данные удалены",
        "end_moved": "Окончание перенесено вместе с событием",
        "settlement_rescheduled": "Начало перенесено; чек зачёта предоплаты ждёт его",
        "settlement_requested": "Услуга оказана; формируется чек зачёта предоплаты",
        "settlement_receipt_sent": "Чек зачёта предоплаты отправлен на вашу почту",
        "settlement_retry_scheduled": "Чек зачёта предоплаты задерживается; повторяем",
        "settlement_receipt_failed": "Чек зачёта предоплаты не сформирован; передано организатору",
        "settlement_receipt_registered": "Чек зачёта предоплаты зарегистрирован в кассе",
        "settlement_receipt_pending": "Чек зачёта предоплаты ещё не зарегистрирован; проверим снова",
        "settlement_receipt_canceled": "Касса отменила чек зачёта предоплаты; сформирован заново",
    },
}
for _language, _table in JOURNAL.items():
    TEXTS[_language].update({f"journal.{action}": sentence for action, sentence in _table.items()})


#: The messages of the errors a customer meets, in the languages other than English (the
#: English is the message the error is raised with, which may name what was asked for). A code
#: missing here is answered in English. A product's own errors (a lot not found) are in its
#: package (``Product.error_texts``, joined with these by ``kinds.products.error_message``).
ERROR_MESSAGES: dict[str, dict[str, str]] = {
    "ru": {
        "booking_not_found": "Такого бронирования нет.",
        "forbidden": "Это бронирование другого покупателя.",
        "no_pass": "У этого бронирования сейчас нет пропуска: он выдаётся после оплаты и действует до конца брони.",
        "event_not_found": "Такого мероприятия нет.",
        "places_unavailable": "Эти места только что занял кто-то другой.",
        "sold_out": "Столько свободных мест уже нет.",
        "hold_limit_reached": "У вас уже столько неоплаченных броней здесь, сколько можно; сначала оплатите или отмените одну.",
        "captcha_required": "Для этой продажи сначала пройдите проверку на странице бронирования.",
        "captcha_invalid": "Проверка не пройдена или её ответ уже использован; пройдите её ещё раз.",
        "captcha_unavailable": "Проверку сейчас не удаётся выполнить; ничего не забронировано. Повторите через несколько секунд.",
        "too_many_holds": "С вашего сетевого адреса на эту продажу уже держится столько неоплаченных броней, сколько можно; "
                          "место освободится, когда одну из них оплатят, отменят или её срок выйдет.",
        "viewer_address_unknown": "Сейчас через этот сайт не удаётся бронировать; ничего не забронировано. "
                                  "Попробуйте позже.",
        "hold_expired": "Бронь истекла; забронируйте заново.",
        "booking_changed": "Бронирование за это время изменилось; обновите страницу.",
        "request_in_progress": "Этот же запрос сейчас выполняется; повторите чуть позже.",
        "busy": "Сейчас слишком много изменений сразу; ничего не изменено. Повторите через секунду.",
        "rate_limited": "Слишком много запросов; ничего не изменено. Повторите чуть позже.",
        "not_cancellable": "Это бронирование в его нынешнем состоянии отменить нельзя.",
        "checked_in": "По билетам этого бронирования уже вошли; отменить его может только организатор.",
        "internal_error": "У нас что-то пошло не так; ничего не потеряно. Повторите чуть позже.",
    },
}


def language_of(language: str | None) -> str:
    return language if language in TEXTS else DEFAULT_LANGUAGE


def text(key: str, language: str | None = DEFAULT_LANGUAGE, **values: Any) -> str:
    """The text ``key`` in ``language`` (the default language's where unknown), its ``{names}`` filled."""
    return TEXTS[language_of(language)][key].format(**values)


def error_message(code: str, language: str | None) -> str | None:
    """The message of an error ``code`` in ``language`` when it is not English and has one."""
    return ERROR_MESSAGES.get(language_of(language), {}).get(code)
