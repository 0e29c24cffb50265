"""The mail feedback function on its sample event (SES's bounce through the configuration set's SNS
topic): the recipient is suppressed once however often SNS delivers it; what is not an SES event is
dropped, not retried."""
from __future__ import annotations

import copy
import json

from holdfast import wiring
from holdfast.services.mail_policy import address_key
from tests.support.handlers import call, load_event

BOUNCED = "bounce@simulator.amazonses.com"


def test_a_permanent_bounce_suppresses_its_recipient_once(handler_env):
    event = load_event("ses_bounce_sns.json")
    assert call("mail_feedback", event)[1] == {"suppressed": 1}
    assert call("mail_feedback", event)[1] == {"suppressed": 0}            # SNS delivers at least once
    assert wiring.mail_policy().is_suppressed(address_key(BOUNCED))


def test_what_is_not_an_ses_event_is_dropped_and_the_rest_of_the_batch_kept(handler_env):
    event = load_event("ses_bounce_sns.json")
    junk = copy.deepcopy(event["Records"][0])
    junk["Sns"]["Message"] = "not json"
    soft = copy.deepcopy(event["Records"][0])
    message = json.loads(soft["Sns"]["Message"])
    message["bounce"]["bounceType"] = "Transient"
    message["bounce"]["bouncedRecipients"][0]["emailAddress"] = "full@example.org"
    soft["Sns"]["Message"] = json.dumps(message)
    assert call("mail_feedback", {"Records": [junk, soft, event["Records"][0]]})[1] == {"suppressed": 1}
    assert not wiring.mail_policy().is_suppressed(address_key("full@example.org"))
