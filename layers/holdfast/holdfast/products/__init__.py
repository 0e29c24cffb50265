"""The products the engine sells, one package each (kinds/products.py discovers them): events
(general admission and seat maps), appointments (slots of resources) and parking (lots, gates,
passes). A product imports the core and never another product (pyproject.toml's contracts)."""
