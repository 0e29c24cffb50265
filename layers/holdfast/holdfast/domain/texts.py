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
        "review.default": "Мы проверяем это бронирование и свяжемся с вами в течение одного рабочего дня.",
    },
}


#: The messages of the errors a customer meets, in the languages other than English (the
#: English is the message the error is raised with, which may name what was asked for). A code
#: missing here is answered in English.
ERROR_MESSAGES: dict[str, dict[str, str]] = {
    "ru": {
        "booking_not_found": "Такого бронирования нет.",
        "forbidden": "Это бронирование другого покупателя.",
        "no_pass": "У этого бронирования сейчас нет пропуска: он выдаётся после оплаты и действует до конца брони.",
        "event_not_found": "Такого мероприятия нет.",
        "service_not_found": "Такой услуги нет.",
        "lot_not_found": "Такой парковки нет.",
        "places_unavailable": "Эти места только что занял кто-то другой.",
        "sold_out": "Столько свободных мест уже нет.",
        "slot_unavailable": "Это время уже занято; ближайшие свободные указаны в ответе.",
        "no_space_available": "Для этой машины нет места, свободного на всё выбранное время.",
        "hold_limit_reached": "У вас уже столько неоплаченных броней здесь, сколько можно; сначала оплатите или отмените одну.",
        "hold_expired": "Бронь истекла; забронируйте заново.",
        "booking_changed": "Бронирование за это время изменилось; обновите страницу.",
        "request_in_progress": "Этот же запрос сейчас выполняется; повторите чуть позже.",
        "busy": "Сейчас слишком много изменений сразу; ничего не изменено. Повторите через секунду.",
        "rate_limited": "Слишком много запросов; ничего не изменено. Повторите чуть позже.",
        "not_cancellable": "Это бронирование в его нынешнем состоянии отменить нельзя.",
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
