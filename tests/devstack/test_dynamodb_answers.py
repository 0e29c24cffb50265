"""DynamoDB's answers written by the shape walk (devstack/aws/dynamodb_answers.py) are moto's own:
every operation the engine uses, on items with every attribute type, is answered both ways and
compared (the module's CHECK), and the walk is seen to have written them (not handed back)."""
from __future__ import annotations

import datetime

import boto3
import pytest
from moto import mock_aws

from devstack.aws import dynamodb_answers


@pytest.fixture
def checked(monkeypatch):
    dynamodb_answers.install()   # tests/conftest.py installs it too; a second install changes nothing
    monkeypatch.setattr(dynamodb_answers, "CHECK", True)
    dynamodb_answers.WRITTEN.clear()
    with mock_aws():
        client = boto3.client("dynamodb", region_name="eu-west-1")
        client.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                                  {"AttributeName": "sk", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                       {"AttributeName": "sk", "KeyType": "RANGE"}])
        yield client


ITEM = {"pk": {"S": "p"}, "sk": {"S": "1"}, "n": {"N": "12.50"}, "b": {"B": b"\x00\xffbytes"},
        "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2"]}, "bs": {"BS": [b"x", b"y"]}, "t": {"BOOL": True},
        "nothing": {"NULL": True}, "l": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"deep": {"L": [{"B": b"z"}]}}}]},
        "m": {"M": {"a": {"S": "ü€"}, "e": {"M": {}}, "el": {"L": []}}}}


def test_every_operation_the_engine_uses_answers_as_moto_does(checked):
    client = checked
    client.put_item(TableName="t", Item=ITEM)
    client.put_item(TableName="t", Item={**ITEM, "sk": {"S": "2"}}, ReturnValues="ALL_OLD")
    replaced = client.put_item(TableName="t", Item={**ITEM, "sk": {"S": "2"}, "n": {"N": "3"}}, ReturnValues="ALL_OLD")
    assert replaced["Attributes"]["b"] == {"B": b"\x00\xffbytes"}
    assert client.get_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "1"}})["Item"] == ITEM
    assert "Item" not in client.get_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "9"}})
    client.get_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "1"}}, ProjectionExpression="m.a, l[2]")
    page = client.query(TableName="t", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p"}},
                        Limit=1, ConsistentRead=True)
    assert page["Count"] == 1 and page["LastEvaluatedKey"] == {"pk": {"S": "p"}, "sk": {"S": "1"}}
    client.query(TableName="t", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p"}},
                 Select="COUNT", ReturnConsumedCapacity="TOTAL")
    client.scan(TableName="t", FilterExpression="n > :z", ExpressionAttributeValues={":z": {"N": "0"}})
    updated = client.update_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "1"}},
                                 UpdateExpression="SET n = n + :one, m.a = :s", ReturnValues="ALL_NEW",
                                 ExpressionAttributeValues={":one": {"N": "1"}, ":s": {"S": "new"}})
    assert float(updated["Attributes"]["n"]["N"]) == 13.5
    client.update_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "1"}}, UpdateExpression="REMOVE ss",
                       ReturnValues="UPDATED_OLD")
    got = client.batch_get_item(RequestItems={"t": {"Keys": [{"pk": {"S": "p"}, "sk": {"S": s}} for s in "12"]}})
    assert len(got["Responses"]["t"]) == 2
    client.transact_get_items(TransactItems=[{"Get": {"TableName": "t", "Key": {"pk": {"S": "p"}, "sk": {"S": "2"}}}}])
    client.delete_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "2"}}, ReturnValues="ALL_OLD")
    with pytest.raises(client.exceptions.ConditionalCheckFailedException):
        client.delete_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "1"}}, ConditionExpression="attribute_not_exists(pk)")
    described = client.describe_table(TableName="t")["Table"]
    assert isinstance(described["CreationDateTime"], datetime.datetime)

    written = {operation for (operation, by_walk), count in dynamodb_answers.WRITTEN.items() if by_walk}
    # the walk wrote these (compared with moto's answer each time); the rest moto wrote itself
    assert {"PutItem", "GetItem", "Query", "Scan", "UpdateItem", "BatchGetItem", "TransactGetItems",
            "DescribeTable"} <= written, dynamodb_answers.WRITTEN
