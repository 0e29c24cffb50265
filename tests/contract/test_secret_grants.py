"""One secret per purpose, granted exactly where it is read (issues 30 and 34).

What a function reads is what its handler names in ``wiring.cold_start(...)``: those secrets are
read and checked at its start, and any other is out of its reach, because the template tells a
function the name of a secret (its ``*_SECRET_NAME`` variable) only where the function declares
it (``Secret.read`` refuses without the variable). The template must grant each function
GetSecretValue on exactly those secrets, and tell it exactly those names.
"""
from __future__ import annotations

import ast
import json
import re
from typing import Any

from holdfast import wiring
from holdfast.config import variable_of
from tests.support.handlers import REPO
from tests.support.template import template

RESOURCES = template()["Resources"]
FUNCTIONS = {name: r["Properties"] for name, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::Function"}
VARIABLES = {variable_of(secret.setting): key for key, secret in wiring.SECRETS.items()}
#: The parking product's signing root: its own secret already, read lazily by the functions that
#: sign entry passes (products/parking/wiring.py), not through cold_start.
PARKING = "ParkingKeySecretName"
#: Events' ticket signing root, a root of its own (issue 42, finding 12), read lazily the same way.
TICKETS = "TicketKeySecretName"
SIGNING_ROOTS = {PARKING, TICKETS}
#: Each product's published public keys (issue 42, finding 12): what the checking functions hold.
PARKING_PUBLIC, TICKETS_PUBLIC = "ParkingPublicKeysSecretName", "TicketPublicKeysSecretName"
PASS_KEYS = SIGNING_ROOTS | {PARKING_PUBLIC, TICKETS_PUBLIC}
#: The challenge verifier's server key (issue 42, finding 13): read on the first hold that must
#: carry a solved challenge (wiring.CAPTCHA_SECRET), not at a cold start.
CAPTCHA = "CaptchaSecretName"
#: The key of holds' network addresses (wiring.HOLDER_KEY_SECRET): read on the first hold of an
#: offering with a cap on live holds per address, not at a cold start.
HOLDER = "HolderKeySecretName"
LAZY = PASS_KEYS | {CAPTCHA, HOLDER}
#: The variable each of those is told by (products' config sections).
PASS_KEY_VARIABLES = {PARKING: "PARKING_KEY_SECRET_NAME", TICKETS: "TICKET_KEY_SECRET_NAME",
                      PARKING_PUBLIC: "PARKING_PUBLIC_KEYS_SECRET_NAME", TICKETS_PUBLIC: "TICKET_PUBLIC_KEYS_SECRET_NAME"}

def declared(code_uri: str) -> set[str]:
    """The secrets (keys of wiring.SECRETS) a handler names in its ``wiring.cold_start(...)``."""
    tree = ast.parse((REPO / code_uri / "app.py").read_text())
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == "cold_start" and getattr(node.func.value, "id", "") == "wiring"]
    assert len(calls) == 1, f"{code_uri}: one wiring.cold_start(...) at import"
    names = set()
    for arg in calls[0].args:
        assert isinstance(arg, ast.Attribute) and getattr(arg.value, "id", "") == "wiring", ast.dump(arg)
        assert arg.attr in wiring.SECRETS, f"{code_uri}: {arg.attr} is not one of wiring.SECRETS"
        names.add(arg.attr)
    # besides the secrets: the models primed for SnapStart, and what it loads at start (wiring.PRELOADS)
    assert [k.arg for k in calls[0].keywords] in ([], ["primed"], ["loads"], ["primed", "loads"]), \
        f"{code_uri}: cold_start takes the secrets, the models primed for SnapStart and the preloads"
    return names


def granted(props: dict[str, Any]) -> set[str]:
    """The parameters naming the secrets a function's role may read."""
    found = set()
    for policy in props.get("Policies") or []:
        if isinstance(policy, dict) and "AWSSecretsManagerGetSecretValuePolicy" in policy:
            arn = policy["AWSSecretsManagerGetSecretValuePolicy"]["SecretArn"]["Fn::Sub"]
            (parameter,) = re.findall(r":secret:\$\{(\w+)\}-\*$", arn)
            found.add(parameter)
        elif isinstance(policy, dict):
            for statement in policy.get("Statement") or []:
                actions = statement.get("Action")
                actions = [actions] if isinstance(actions, str) else actions or []
                assert not any(a.lower().startswith("secretsmanager:") for a in actions), (
                    "secrets are granted through AWSSecretsManagerGetSecretValuePolicy, one secret each")
    return found


def told(props: dict[str, Any]) -> dict[str, str]:
    """The secrets (keys of wiring.SECRETS) whose names a function's environment holds -> the parameter."""
    variables = (props.get("Environment") or {}).get("Variables") or {}
    return {VARIABLES[k]: v["Ref"] for k, v in variables.items() if k in VARIABLES}


def parameters_of_secrets() -> dict[str, str]:
    """Each secret's parameter, the same on every function that is told of it."""
    found: dict[str, set[str]] = {}
    for props in FUNCTIONS.values():
        for key, parameter in told(props).items():
            found.setdefault(key, set()).add(parameter)
    assert all(len(parameters) == 1 for parameters in found.values()), found
    return {key: next(iter(parameters)) for key, parameters in found.items()}


def test_each_secret_has_its_own_parameter_and_no_function_is_told_of_it_globally():
    parameters = parameters_of_secrets()
    assert set(parameters) == set(wiring.SECRETS), "every secret is read by some function"
    assert len(set(parameters.values())) == len(parameters), f"one secret per purpose: {parameters}"
    assert not PASS_KEYS & set(parameters.values())
    globals_ = template()["Globals"]["Function"]["Environment"]["Variables"]
    assert not set(VARIABLES) & set(globals_), "a secret's name goes only to the functions that read it"
    for parameter in parameters.values():
        assert template()["Parameters"][parameter]["Type"] == "String"


def test_each_function_is_granted_and_told_exactly_the_secrets_its_code_reads():
    parameters = parameters_of_secrets()
    readers: dict[str, set[str]] = {key: set() for key in wiring.SECRETS}
    for name, props in FUNCTIONS.items():
        reads = declared(props["CodeUri"])
        for key in reads:
            readers[key].add(name)
        assert set(told(props)) == reads, f"{name} reads {sorted(reads)}, is told of {sorted(told(props))}"
        assert granted(props) - LAZY == {parameters[key] for key in reads}, (
            f"{name} reads {sorted(reads)}, is granted {sorted(granted(props))}")
    # what the issues ask for, as the code above derives it
    assert readers["PLATFORM_KEY_SECRET"] == {"AdminApiFunction"}
    assert readers["ADMISSION_TOKEN_SECRET"] == {"WaitingRoomFunction", "BookingsApiFunction", "WaitlistApiFunction"}
    assert "CatalogApiFunction" not in set().union(*readers.values())
    assert all(readers.values())


def test_the_challenge_key_goes_only_to_the_functions_that_hold():
    """The verifier's server key is granted and told to the hold functions only (events', services'
    and orders' holds in the bookings function, lots' reservations in the parking function)."""
    holders = {"BookingsApiFunction", "ParkingApiFunction"}
    assert {name for name, props in FUNCTIONS.items() if CAPTCHA in granted(props)} == holders
    for name, props in FUNCTIONS.items():
        variables = (props.get("Environment") or {}).get("Variables") or {}
        assert (variables.get("CAPTCHA_SECRET_NAME") == {"Ref": CAPTCHA}) == (name in holders), name
    assert variable_of(wiring.CAPTCHA_SECRET.setting) == "CAPTCHA_SECRET_NAME"


def hands_holds_an_address(code_uri: str) -> bool:
    """Whether a handler gives a hold the network address it came from (``holder_address=
    viewer_address(app)``), which the bookings service keys with the holder key secret."""
    tree = ast.parse((REPO / code_uri / "app.py").read_text())
    return any(isinstance(node, ast.keyword) and node.arg == "holder_address" and isinstance(node.value, ast.Call)
               and getattr(node.value.func, "id", "") == "viewer_address" for node in ast.walk(tree))


def test_the_holder_key_goes_only_to_the_functions_that_hand_holds_an_address():
    """Issue 42, finding 11/13 follow-up: a hold's network address is stored as an HMAC under a
    secret of its own, not under the id salt (the public stack id). It is granted and told exactly
    to the functions whose handlers hand a hold its address, as the code shows; the guide creates
    it with its one field."""
    holders = {name for name, props in FUNCTIONS.items() if hands_holds_an_address(props["CodeUri"])}
    assert holders == {"BookingsApiFunction", "ParkingApiFunction"}
    assert {name for name, props in FUNCTIONS.items() if HOLDER in granted(props)} == holders
    for name, props in FUNCTIONS.items():
        variables = (props.get("Environment") or {}).get("Variables") or {}
        assert (variables.get("HOLDER_KEY_SECRET_NAME") == {"Ref": HOLDER}) == (name in holders), name
    assert variable_of(wiring.HOLDER_KEY_SECRET.setting) == "HOLDER_KEY_SECRET_NAME"
    assert "HOLDER_KEY_SECRET_NAME" not in template()["Globals"]["Function"]["Environment"]["Variables"]
    guide = (REPO / "docs" / "deploy.md").read_text()
    created = dict(re.findall(r"create-secret --name (\S+) \\\n\s+--secret-string '([^']+)'", guide))
    default = template()["Parameters"][HOLDER]["Default"]
    assert set(json.loads(created[default])) == set(wiring.HOLDER_KEY_SECRET.fields), default
    assert f"`{HOLDER}`" in guide


def test_each_product_signs_with_its_own_root_and_the_functions_that_only_check_hold_public_keys():
    """Issue 42, finding 12: one signing root signed every lot's and event's passes, and the
    functions that only check passes (gates, doors) could read it. Each product now has a private
    root, granted and told only to the functions that sign (a booking's view, its confirmation),
    and a published list of public keys, granted to the checking functions and the signers (which
    refuse to sign with a key not listed). No function is told of a key secret it is not granted."""
    globals_ = template()["Globals"]["Function"]["Environment"]["Variables"]
    assert not set(PASS_KEY_VARIABLES.values()) & set(globals_), "a key secret's name goes only to its readers"
    readers = {key: {name for name, props in FUNCTIONS.items() if key in granted(props)} for key in PASS_KEYS}
    signers = {"BookingsApiFunction", "NotifierFunction"}
    assert readers[PARKING] == signers and readers[TICKETS] == signers
    assert readers[PARKING_PUBLIC] == signers | {"ParkingApiFunction"}
    assert readers[TICKETS_PUBLIC] == signers | {"DoorsApiFunction"}
    for name in ("ParkingApiFunction", "DoorsApiFunction"):   # gates, doors and their configuration
        assert not granted(FUNCTIONS[name]) & SIGNING_ROOTS, f"{name} checks passes: public keys only"
    for name, props in FUNCTIONS.items():
        variables = (props.get("Environment") or {}).get("Variables") or {}
        told_keys = {key for key, variable in PASS_KEY_VARIABLES.items() if variable in variables}
        assert told_keys == granted(props) & PASS_KEYS, name
        for key in told_keys:
            assert variables[PASS_KEY_VARIABLES[key]] == {"Ref": key}
    defaults = {template()["Parameters"][key]["Default"] for key in PASS_KEYS}
    assert len(defaults) == 4


def test_the_local_stack_publishes_the_public_half_of_each_products_root():
    """The local stack's published lists name exactly the key its roots sign with (what a deploy
    must do too: docs/deploy.md, "Signing keys"), and the signer refuses a root whose key is not listed."""
    import pytest

    from devstack.aws.stack import LOCAL_SECRETS
    from holdfast.domain.signatures import KeyNotPublished, unb64
    from holdfast.products.events.tickets import EventKeys
    from holdfast.products.parking.tokens import LotKeys

    for root, public, keys in ((PARKING, PARKING_PUBLIC, LotKeys), (TICKETS, TICKETS_PUBLIC, EventKeys)):
        seed = LOCAL_SECRETS[root]["master_seed"].encode()
        published = [unb64(text) for text in LOCAL_SECRETS[public]["public_keys"]]
        assert keys(seed, published).published == published
        other = TICKETS_PUBLIC if public == PARKING_PUBLIC else PARKING_PUBLIC
        with pytest.raises(KeyNotPublished):
            keys(seed, [unb64(text) for text in LOCAL_SECRETS[other]["public_keys"]])


def test_the_deploy_guide_creates_each_secret_with_exactly_its_fields():
    guide = (REPO / "docs" / "deploy.md").read_text()
    commands = {name: set(json.loads(value)) for name, value in
                re.findall(r"create-secret --name (\S+) \\\n\s+--secret-string '([^']+)'", guide)}
    for key, parameter in parameters_of_secrets().items():
        default = template()["Parameters"][parameter]["Default"]
        assert commands.get(default) == set(wiring.SECRETS[key].fields), (key, default)
        assert f"`{parameter}`" in guide, parameter
