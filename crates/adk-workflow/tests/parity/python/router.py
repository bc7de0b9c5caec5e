"""A router with a default route: `classify` routes long messages to `handle_long`, every other
message takes the default route to `handle_short`."""

from google.adk import Event
from google.adk.workflow import DEFAULT_ROUTE, START, Workflow

import _harness


def classify(node_input: str):
  route = "long" if len(node_input) > 3 else "short"
  return Event(output={"text": node_input}, route=route, state={"seen": node_input})


def handle_long(node_input: dict) -> str:
  return "LONG:" + node_input["text"]


def handle_short(node_input: dict) -> str:
  return "SHORT:" + node_input["text"]


root = Workflow(
    name="router_wf",
    edges=[(START, classify, {"long": handle_long, DEFAULT_ROUTE: handle_short})],
)

_harness.run(root, [_harness.user("hello"), _harness.user("hi")])
