"""The gate pass routes on their sample events, through the handler: a new pass on a closed
ticket is refused and printed as a metric an operator can alarm on; a pass id this gate used for
another car is 409 ``pass_id_reused``; another gate's pass with the same id is its own."""
from tests.handlers.test_metrics import values
from tests.handlers.test_parking_api import ORGANIZER, create_lot, gate_call, parking_env  # noqa: F401
from tests.support.handlers import api_event, call


def registered_gate(lot_id, name):
    return call("parking_api", api_event("create_gate.json", path_params={"lot_id": lot_id}, headers=ORGANIZER,
                                         body={"name": name}))[1]


def test_a_closed_ticket_is_refused_and_counted_and_a_reused_pass_id_is_409(parking_env, capsys):
    lot_id = create_lot()[1]["lot_id"]
    north, south = registered_gate(lot_id, "North"), registered_gate(lot_id, "South")
    status, entered = gate_call("gate_entry.json", lot_id, north["gate_id"], north["gate_key"])
    assert status == 200 and entered["gate_open"] is True
    status, left = gate_call("gate_exit.json", lot_id, north["gate_id"], north["gate_key"],
                             body={"event_id": "north-0002", "ticket_id": entered["ticket_id"]})
    assert status == 200 and left["exit_granted"] is True                     # inside the grace minutes
    capsys.readouterr()
    status, again = gate_call("gate_exit.json", lot_id, south["gate_id"], south["gate_key"],
                              body={"event_id": "north-0002", "ticket_id": entered["ticket_id"]})
    assert status == 200 and (again["exit_granted"], again["reason"]) == (False, "ticket_closed")
    assert values(capsys) == {"ClosedTicketPasses": [1.0]}

    status, reused = gate_call("gate_entry.json", lot_id, north["gate_id"], north["gate_key"],
                               body={"event_id": "north-0001", "plate": "X999XX"})
    assert (status, reused["error"]["code"]) == (409, "pass_id_reused")
    status, theirs = gate_call("gate_entry.json", lot_id, south["gate_id"], south["gate_key"])
    assert status == 200 and theirs["gate_open"] is True and theirs["ticket_id"] != entered["ticket_id"]
