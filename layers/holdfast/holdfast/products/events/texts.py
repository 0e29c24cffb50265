"""Events' own steps in the readers' languages (Product.texts): a ticket checked in at a door, and
a check-in case opened and resolved. Served by GET /texts beside the core's."""

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "journal.ticket_checked_in": "A ticket was checked in at the door",
        "journal.checkin_case_opened": "Two doors let one ticket in; recorded for the organizer",
        "journal.checkin_case_resolved": "Check-in case resolved by the organizer",
    },
    "ru": {
        "journal.ticket_checked_in": "Билет прошёл на входе",
        "journal.checkin_case_opened": "Два входа пропустили один билет; записано для организатора",
        "journal.checkin_case_resolved": "Организатор разобрал случай на входе",
    },
}
