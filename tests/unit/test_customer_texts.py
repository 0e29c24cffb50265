"""The customer texts (domain/texts.py): every language says every text with the same values to
fill in, and the API's own sentences are these texts in the reader's language."""
from __future__ import annotations

import string

import pytest

from holdfast.domain import texts
from holdfast.domain.review_steps import REVIEW_REASONS, hold_next_step, next_step


def names(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_language_has_every_text_with_the_same_values_to_fill():
    english = texts.TEXTS["en"]
    assert set(texts.TEXTS) == set(texts.LANGUAGES)
    for language, table in texts.TEXTS.items():
        assert set(table) == set(english), language
        for key, template in table.items():
            assert names(template) == names(english[key]), (language, key)
            assert template.strip() and template == template.strip(), (language, key)
    assert set(texts.ERROR_MESSAGES) <= set(texts.LANGUAGES) - {texts.DEFAULT_LANGUAGE}


def test_the_hold_sentence_says_what_the_engine_does_with_a_late_payment():
    # services/payments.py confirms a late payment while the places are free, else offers others or the money
    sentence = hold_next_step("2031-01-01T10:00:00Z")
    assert "2031-01-01T10:00:00Z" in sentence and "confirms the booking if the places are still free" in sentence
    assert "given back" not in sentence
    russian = hold_next_step("2031-01-01T10:00:00Z", "ru")
    assert "2031-01-01T10:00:00Z" in russian and "подтвердится, если места ещё свободны" in russian


def test_review_sentences_in_each_language_and_the_default_for_any_other_reason():
    assert "refund_rejected_insufficient_funds".split("_rejected_")[0] in REVIEW_REASONS
    assert next_step("refund_rejected_insufficient_funds") == texts.text("review.refund")
    assert next_step("something_new", "ru") == texts.TEXTS["ru"]["review.default"]
    assert next_step("amount_mismatch", "ru") == texts.TEXTS["ru"]["review.amount_mismatch"]
    assert next_step("amount_mismatch", "de") == texts.TEXTS["en"]["review.amount_mismatch"]


def test_errors_are_translated_where_a_translation_exists():
    assert texts.error_message("booking_not_found", "ru") == "Такого бронирования нет."
    assert texts.error_message("booking_not_found", "en") is None   # the message it was raised with
    assert texts.error_message("no_such_code", "ru") is None


def test_every_journal_action_the_core_writes_is_named_in_every_language():
    """A page shows a journal entry by its action in the reader's language ("journal.<action>");
    an action with no text would fall back to the engine's English record. The actions are read
    from the code that journals them, in the forms it writes them today (a literal, a default, a
    condition's pair, the values of the two built from one), so a new one of these forms without a
    text fails here."""
    import re

    from tests.support.handlers import REPO

    written = set()
    core = REPO / "layers" / "holdfast" / "holdfast"
    for source in core.rglob("*.py"):
        if source.relative_to(core).parts[0] == "products":
            continue     # a product's own steps: the core's texts name no product (docs/architecture.md)
        code = source.read_text()
        for pattern in (r'\baction="([a-z_]+)"', r'"action": "([a-z_]+)"', r'\baction: str = "([a-z_]+)"',
                        r'\b_note\(\w+, "([a-z_]+)"'):
            written |= set(re.findall(pattern, code))
        if source.name in ("payments.py", "refunds.py"):     # (action, decision[, ...]) chosen by a condition
            written |= set(re.findall(r'\(\(?"([a-z]+(?:_[a-z]+)+)", f?"[a-z]', code))
        # the journalled actions built from a value: each value they take
        if 'action=f"payment_found_{how}"' in code:
            written |= {f"payment_found_{how}" for how in re.findall(r'"(by_[a-z_]+)"', code)}
    written |= {"refund_succeeded", "refund_canceled"}
    written -= {"store_true"}                 # an argparse flag, not a journal action
    for language, table in texts.TEXTS.items():
        missing = {action for action in written if f"journal.{action}" not in table}
        assert not missing, (language, sorted(missing))


def test_every_journal_action_a_product_writes_is_named_in_every_language_by_the_product():
    """A product's own steps (a car at a gate, a ticket at a door, a refunded no-show, its cases)
    come with the product's texts (Product.texts), so a Russian page names them too; GET /texts
    serves them beside the core's, and a product cannot change a key of the core's."""
    import re

    from holdfast.kinds import products
    from tests.support.handlers import REPO

    written = set()
    root = REPO / "layers" / "holdfast" / "holdfast" / "products"
    for source in root.rglob("*.py"):
        code = source.read_text()
        for pattern in (r'\baction="([a-z_]+)"', r'"action": "([a-z_]+)"', r'resolved_action="([a-z_]+)"',
                        r'"([a-z]+_case_opened)"'):
            written |= set(re.findall(pattern, code))
    # the core journals the refund of a kind's timer state as "<state>_refund" (services/refunds.py)
    written |= {f"{state.status.lower()}_refund" for product in products.registered() for kind in product.kinds
                for state in kind.extra_states if "timer" in state.actors}
    assert {"vehicle_entered", "ticket_checked_in", "gate_case_opened", "checkin_case_resolved",
            "no_show_refund"} <= written
    every = products.customer_texts()
    for language, table in every.items():
        missing = {action for action in written if f"journal.{action}" not in table}
        assert not missing, (language, sorted(missing))
    assert set(every["en"]) == set(every["ru"])


def test_a_product_cannot_change_a_core_text():
    from holdfast.kinds import products

    rogue = products.Product(name="rogue", kinds=(), texts="holdfast.domain.texts:TEXTS")
    products._PRODUCTS["rogue"] = rogue
    try:
        with pytest.raises(ValueError, match="not its to add"):
            products.customer_texts()
    finally:
        products._PRODUCTS.pop("rogue")


def test_a_products_errors_are_translated_by_the_product_and_the_core_keeps_none_of_them():
    """lot_not_found and slot_unavailable are parking's and appointments' codes: their messages are
    in the products' packages (Product.error_texts), and the API finds them beside the core's."""
    from holdfast.kinds import products

    assert products.error_message("lot_not_found", "ru") == "Такой парковки нет."
    assert products.error_message("slot_unavailable", "ru").startswith("Это время уже занято")
    assert products.error_message("booking_not_found", "ru") == "Такого бронирования нет."
    assert products.error_message("lot_not_found", "en") is None   # the message it was raised with
    assert texts.error_message("lot_not_found", "ru") is None


def test_a_product_cannot_give_a_core_error_another_message():
    from holdfast.kinds import products

    rogue = products.Product(name="rogue", kinds=(), error_texts="holdfast.domain.texts:ERROR_MESSAGES")
    products._PRODUCTS["rogue"] = rogue
    try:
        with pytest.raises(ValueError, match="not its to add"):
            products.error_message("booking_not_found", "ru")
    finally:
        products._PRODUCTS.pop("rogue")
