"""The customer texts of the orders' own steps (domain/texts.py's table), in every language."""
from __future__ import annotations

TEXTS = {
    "en": {"journal.order_held": "Every line of the order held together",
           "journal.order_given": "Given to you by the organizer"},
    "ru": {"journal.order_held": "Все позиции заказа забронированы вместе",
           "journal.order_given": "Организатор выдал вам заказ"},
}
