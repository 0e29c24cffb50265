"""Appointments' own errors in the languages other than English (Product.error_texts), beside the
core's in domain/texts.py: the English is the message the error is raised with."""

ERROR_MESSAGES: dict[str, dict[str, str]] = {
    "ru": {
        "service_not_found": "Такой услуги нет.",
        "slot_unavailable": "Это время уже занято; ближайшие свободные указаны в ответе.",
    },
}
