"""Fan-out with a join and a single-turn agent: two fetches run on their own branches, the join
collects their outputs by name, and an LLM agent (single-turn, as every workflow agent node is by
default) summarizes the join's output."""

from google.adk import Agent
from google.adk.workflow import JoinNode, START, Workflow

import _harness


def fetch_a(node_input: str) -> dict:
  return {"a": node_input + "-A"}


def fetch_b(node_input: str) -> dict:
  return {"b": node_input + "-B"}


summarizer = Agent(
    name="summarizer",
    model=_harness.scripted("summarizer-model", _harness.text("summary of A and B")),
    instruction="Summarize.",
)

root = Workflow(
    name="fan_wf",
    edges=[(START, (fetch_a, fetch_b), JoinNode(name="join"), summarizer)],
)

_harness.run(root, [_harness.user("x")])
