"""The local stack's TransactWriteItems keeps DynamoDB's all-or-nothing semantics."""
import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from devstack.aws import transactions


@pytest.fixture
def table():
    transactions.install()
    with mock_aws():
        client = boto3.client("dynamodb", region_name="eu-central-1")
        client.create_table(TableName="tx-test", BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
        client.put_item(TableName="tx-test", Item={"pk": {"S": "pool"}, "n": {"N": "1"}})
        yield client


def item(client, key):
    return client.get_item(TableName="tx-test", Key={"pk": {"S": key}}).get("Item")


def take(n):
    return {"Update": {"TableName": "tx-test", "Key": {"pk": {"S": "pool"}}, "UpdateExpression": "SET n = n - :n",
                       "ConditionExpression": "n >= :n", "ExpressionAttributeValues": {":n": {"N": str(n)}}}}


def put(key):
    return {"Put": {"TableName": "tx-test", "Item": {"pk": {"S": key}}, "ConditionExpression": "attribute_not_exists(pk)"}}


def test_success_applies_every_item(table):
    table.transact_write_items(TransactItems=[put("a"), take(1)])
    assert item(table, "a") and item(table, "pool")["n"] == {"N": "0"}


def test_a_failed_condition_writes_nothing_and_names_the_item(table):
    with pytest.raises(ClientError) as err:
        table.transact_write_items(TransactItems=[put("a"), put("b"), take(2)])
    reasons = [r["Code"] for r in err.value.response["CancellationReasons"]]
    assert reasons == ["None", "None", "ConditionalCheckFailed"]
    assert item(table, "a") is None and item(table, "b") is None
    assert item(table, "pool")["n"] == {"N": "1"}


def test_an_error_while_applying_puts_the_touched_items_back(table):
    broken = {"Update": {"TableName": "tx-test", "Key": {"pk": {"S": "pool"}}, "UpdateExpression": "SET n = n - :x",
                         "ExpressionAttributeValues": {":x": {"S": "text"}}}}
    with pytest.raises(ClientError):
        table.transact_write_items(TransactItems=[put("a"), broken])
    assert item(table, "a") is None
    assert item(table, "pool")["n"] == {"N": "1"}


def test_one_item_twice_is_refused(table):
    with pytest.raises(ClientError) as err:
        table.transact_write_items(TransactItems=[take(1), take(1)])
    assert err.value.response["Error"]["Code"] == "ValidationException"
    assert item(table, "pool")["n"] == {"N": "1"}
