"""The catalog reads an event's creation command through typed attributes (issue 48, "go to
definition follows"): ``services/catalog.py`` calls no ``getattr`` with an attribute named in a
string, every attribute ``create_event`` reads off its ``request`` is declared on the
``EventCreation`` protocol, and the events product's ``CreateEvent`` has each of them."""
from __future__ import annotations

import ast
import dataclasses
import inspect

from holdfast.products.events.commands import CreateEvent
from holdfast.services import catalog


def _tree() -> ast.Module:
    return ast.parse(inspect.getsource(catalog))


def test_the_catalog_names_no_attribute_in_a_string():
    named = [node.lineno for node in ast.walk(_tree())
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
             and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)]
    assert named == [], f"services/catalog.py reads attributes by string at lines {named}"


def test_what_create_event_reads_of_its_request_is_declared_and_the_events_command_has_it():
    [create] = [node for node in ast.walk(_tree()) if isinstance(node, ast.FunctionDef) and node.name == "create_event"]
    read = {node.attr for node in ast.walk(create)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "request"}
    declared = set(catalog.EventCreation.__annotations__)
    assert read and read <= declared, f"read but not declared on EventCreation: {sorted(read - declared)}"
    fields = {field.name for field in dataclasses.fields(CreateEvent)}
    assert declared <= fields, f"declared on EventCreation but not on CreateEvent: {sorted(declared - fields)}"
