"""The core names no product (issue 29). The import contracts in pyproject.toml keep the core from
importing one; this keeps it from spelling one in code: outside ``holdfast/products/``, no
identifier or string literal of the deployed package holds a product's name, its kinds' names, the
key prefixes of its items, or its words (a lot, a plate, an appointment).

Comments and docstrings may name products: they say why, often by example ("a parking exit's
payment"), and such an example couples nothing. Code may not: a product's word in the core is a
rule of that product the core carries, so a product's setting, key or item belongs in its package
and reaches the core through the registry (kinds/products.py).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from holdfast.kinds import products
from tests.support.handlers import REPO

PACKAGE = REPO / "layers" / "holdfast" / "holdfast"
#: Products' words the registry does not list: their items' keys and their vocabulary.
WORDS = ("appointment", "parking", "PARK#", "LOT#", "SUB#", "TICKET#", "GATECASE#", "PASS#", "RESOURCE#",
         "lot_id", "ticket_id", "space_id", r"\bplates?\b", r"\blots?\b", r"\bslots?\b",
         # the same words opening or inside a snake_case name (an error code: lot_not_found, no_space_available)
         r"(?<![a-z])lots?_", r"(?<![a-z])slots?_", r"(?<![a-z])spaces?_")
#: The core's own vocabulary shares its name with the event places' product: the core's offerings
#: are events (``EVENT#``, ``/events``) whatever they sell, and its kinds' names ("named",
#: "counted") are ordinary words.
CORE_VOCABULARY = {"events"}
#: Where the core keeps a product's word for a reason, and the reason.
KEPT = {
    # the group-day partition prefix of stored granule claims; renaming it would migrate live claims
    ("adapters/granule_claims.py", "PARK#"),
}


def product_words() -> list[str]:
    words = list(WORDS)
    for product in products.registered():
        if product.name in CORE_VOCABULARY:
            continue
        words += [re.escape(product.name), *(rf"\b{re.escape(kind.name)}\b" for kind in product.kinds)]
        if product.owned_items:
            words += [re.escape(pk) for pk, _ in products.resolve(product.owned_items)]
    return words


def code_texts(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of every identifier and string literal, docstrings and bare strings left out."""
    prose = {id(node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.lineno, node.name))
        elif isinstance(node, ast.arg):
            found.append((node.lineno, node.arg))
        elif isinstance(node, ast.keyword) and node.arg:
            found.append((node.value.lineno, node.arg))
        elif isinstance(node, ast.alias):
            found.append((node.lineno, node.asname or node.name))
    return found


def naming(source: str, pattern: re.Pattern[str]) -> list[tuple[int, str, str]]:
    return [(line, match.group(0), text) for line, text in code_texts(ast.parse(source))
            for match in [pattern.search(text)] if match]


def core_modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] != "products")


def test_the_core_spells_no_products_word_in_code():
    pattern = re.compile("|".join(product_words()), re.IGNORECASE)
    found = [f"{path.relative_to(PACKAGE)}:{line}: {word!r} in {text[:80]!r}"
             for path in core_modules() for line, word, text in naming(path.read_text(), pattern)
             if (str(path.relative_to(PACKAGE)), word) not in KEPT]
    assert not found, "the core names a product (move it into the product's package):\n" + "\n".join(found)


def test_the_cores_message_templates_spell_no_products_word():
    """A template is code the core ships: a product's message (a plate, a lot) is in its package,
    found through its ``Product.messages`` (services/messages.py)."""
    pattern = re.compile("|".join(product_words()), re.IGNORECASE)
    templates = [path for path in sorted((PACKAGE / "templates").rglob("*")) if path.is_file()]
    found = [f"{path.relative_to(PACKAGE)}:{number}: {match.group(0)!r}" for path in templates
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for match in [pattern.search(line)] if match]
    assert len(templates) > 10 and not found, "\n".join(found)


def test_the_check_sees_code_and_leaves_prose_alone():
    pattern = re.compile("|".join(product_words()), re.IGNORECASE)
    source = ('"""A parking lot\'s gates."""\n'
              '# parking: a comment\n'
              'def f(lot_id):\n'
              '    """Each lot."""\n'
              '    return {"pk": f"LOT#{lot_id}", "plate": settings.parking_key}\n')
    assert sorted({word for _, word, _ in naming(source, pattern)}) == ["LOT#", "lot_id", "parking", "plate"]
    assert {"parking", "slots"} <= {word.strip("\\b") for word in product_words()}
    # an error code is a string like any other: a product's word inside it is seen (lot_not_found
    # stayed in domain/texts.py while only whole words were looked for)
    codes = 'MESSAGES = {"lot_not_found": "", "slot_unavailable": "", "no_space_available": "", "booking_not_found": ""}\n'
    assert [word for _, word, _ in naming(codes, pattern)] == ["lot_", "slot_", "space_"]
    assert len(core_modules()) > 50 and not any("products" in path.parts for path in core_modules())
