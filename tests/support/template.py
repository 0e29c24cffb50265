"""Reads template.yaml the way CloudFormation does, so tests build resources from the deployed schema."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from samtranslator.yaml_helper import yaml_parse

REPO = Path(__file__).resolve().parents[2]


@functools.cache
def template() -> dict[str, Any]:
    return yaml_parse((REPO / "template.yaml").read_text())


def create_bookings_table(client, name: str) -> None:
    """Create the BookingsTable exactly as the template declares its keys, indexes and stream."""
    props = template()["Resources"]["BookingsTable"]["Properties"]
    client.create_table(
        TableName=name,
        BillingMode=props["BillingMode"],
        AttributeDefinitions=props["AttributeDefinitions"],
        KeySchema=props["KeySchema"],
        GlobalSecondaryIndexes=props["GlobalSecondaryIndexes"],
        StreamSpecification={"StreamEnabled": True, **props["StreamSpecification"]},
    )
