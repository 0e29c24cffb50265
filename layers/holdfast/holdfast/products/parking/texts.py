"""Parking's own steps in its customers' and operators' languages (Product.texts): a car passing a
gate, a refunded no-show, a gate case opened and resolved. Served by GET /texts beside the core's.
Its own errors' messages too (Product.error_texts), beside the core's in domain/texts.py."""

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "journal.vehicle_entered": "Your car came in", "journal.vehicle_exited": "Your car left",
        "journal.no_show_refund": "Nobody came in the window; money being returned",
        "journal.gate_case_opened": "A gate and the records disagreed; sent to the operator",
        "journal.gate_case_resolved": "Gate case resolved by the operator",
    },
    "ru": {
        "journal.vehicle_entered": "Машина въехала", "journal.vehicle_exited": "Машина выехала",
        "journal.no_show_refund": "За время брони никто не въехал; деньги возвращаются",
        "journal.gate_case_opened": "Шлагбаум и записи разошлись; передано оператору",
        "journal.gate_case_resolved": "Оператор разобрал случай на шлагбауме",
    },
}

#: The messages of parking's own errors in the languages other than English (as domain/texts.py's
#: ERROR_MESSAGES: the English is the message the error is raised with).
ERROR_MESSAGES: dict[str, dict[str, str]] = {
    "ru": {
        "lot_not_found": "Такой парковки нет.",
        "no_space_available": "Для этой машины нет места, свободного на всё выбранное время.",
    },
}
