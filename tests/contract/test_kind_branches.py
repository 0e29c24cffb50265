"""The services, the store and the handlers never branch on the inventory kind: only the kinds'
own modules (holdfast/kinds/, and a product's module that defines a kind) may name a kind."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BRANCH = re.compile(r"InventoryKind\.|kind is|kind ==|inventory_kind\"\] ==|inventory_kind\"\] !=")


def test_no_branch_on_the_inventory_kind_outside_the_kinds():
    found = []
    for base in ("layers", "functions"):
        for path in sorted((ROOT / base).rglob("*.py")):
            if "holdfast/kinds/" in path.as_posix():
                continue
            text = path.read_text()
            if "holdfast/products/" in path.as_posix() and re.search(r"^class \w+\(Kind\)", text, re.M):
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if BRANCH.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
