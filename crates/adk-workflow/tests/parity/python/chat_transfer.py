"""A chat transfer: the coordinator transfers to `helper`, which answers; the user's next message
goes to `helper`, which keeps the conversation."""

from google.adk import Agent

import _harness

helper = Agent(
    name="helper",
    description="Helps with details.",
    model=_harness.scripted("helper-model", _harness.text("I can help."), _harness.text("Still here.")),
    instruction="Help.",
)
coordinator = Agent(
    name="coordinator",
    model=_harness.scripted(
        "coordinator-model",
        _harness.call("transfer_to_agent", {"agent_name": "helper"}, "x1"),
    ),
    instruction="Route.",
    sub_agents=[helper],
)

_harness.run(coordinator, [_harness.user("I need help"), _harness.user("thanks")])
