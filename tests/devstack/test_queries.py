"""The local stack's partition-local Query answers exactly what moto's own Query answers."""
import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from devstack.aws import queries

TABLE = "query-test"
PARTITIONS = ["EVENT#a", "EVENT#b", "QUEUE#a", "Ä#ü"]


@pytest.fixture(scope="module")
def client():
    queries.install()
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="eu-central-1")
        dynamodb.create_table(
            TableName=TABLE, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "g", "gs")],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            GlobalSecondaryIndexes=[{"IndexName": "gsi1", "Projection": {"ProjectionType": "ALL"},
                                     "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                                   {"AttributeName": "gs", "KeyType": "RANGE"}]}])
        yield dynamodb


def fill(client, items):
    for key in client.scan(TableName=TABLE, ConsistentRead=True)["Items"]:
        client.delete_item(TableName=TABLE, Key={"pk": key["pk"], "sk": key["sk"]})
    for pk, sk, group, n in items:
        item = {"pk": {"S": pk}, "sk": {"S": sk}, "n": {"N": str(n)}}
        if group is not None:
            item |= {"g": {"S": f"G{group}"}, "gs": {"S": f"{n:03d}"}}
        client.put_item(TableName=TABLE, Item=item)


def every_page(client, **request):
    pages, start = [], None
    while True:
        answer = client.query(TableName=TABLE, **request, **({"ExclusiveStartKey": start} if start else {}))
        pages.append((answer["Items"], answer["Count"], answer.get("ScannedCount")))
        start = answer.get("LastEvaluatedKey")
        if not start:
            return pages


REQUESTS = [
    {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "EVENT#a"}}},
    {"KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
     "ExpressionAttributeValues": {":p": {"S": "EVENT#a"}, ":s": {"S": "POOL"}}, "Limit": 2},
    {"KeyConditionExpression": "pk = :p AND sk BETWEEN :lo AND :hi", "ScanIndexForward": False,
     "ExpressionAttributeValues": {":p": {"S": "Ä#ü"}, ":lo": {"S": "B"}, ":hi": {"S": "S"}}},
    {"KeyConditionExpression": "pk = :p", "FilterExpression": "n > :n", "Limit": 3,
     "ExpressionAttributeValues": {":p": {"S": "QUEUE#a"}, ":n": {"N": "40"}}},
    {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "EVENT#none"}}},
    {"IndexName": "gsi1", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "G1"}}},
    {"IndexName": "gsi1", "KeyConditionExpression": "g = :g AND gs < :s", "Limit": 2, "ScanIndexForward": False,
     "ExpressionAttributeValues": {":g": {"S": "G0"}, ":s": {"S": "050"}}},
]

items = st.lists(st.tuples(st.sampled_from(PARTITIONS),
                           st.sampled_from(["POOL#1", "POOL#2", "POOL#10", "BOOKING", "STATE", "A", "Z", "ß"]),
                           st.one_of(st.none(), st.integers(0, 2)), st.integers(0, 99)),
                 max_size=30, unique_by=lambda t: (t[0], t[1]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items)
def test_every_query_shape_answers_as_moto_does(client, items):
    fill(client, items)
    for request in REQUESTS:
        with queries.bypassed():
            expected = every_page(client, **request)
        assert every_page(client, **request) == expected, request


def test_a_table_query_reads_only_its_partition(client, monkeypatch):
    fill(client, [("EVENT#a", "POOL#1", None, 1)] + [("QUEUE#a", f"E{n:04d}", None, n % 100) for n in range(300)])
    from moto.dynamodb.models.table import Table

    candidates = []
    listing = Table.all_items

    def counted(self):
        found = listing(self)
        candidates.append(len(found))
        return found

    monkeypatch.setattr(Table, "all_items", counted)

    def pools():
        answer = client.query(TableName=TABLE, KeyConditionExpression="pk = :p",
                              ExpressionAttributeValues={":p": {"S": "EVENT#a"}})
        return [item["sk"]["S"] for item in answer["Items"]]

    with queries.bypassed():
        assert pools() == ["POOL#1"]
    assert pools() == ["POOL#1"]
    assert candidates == [301, 1]  # moto's own query lists the whole table; this one the partition
