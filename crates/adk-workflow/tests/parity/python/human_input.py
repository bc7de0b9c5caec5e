"""A human-input loop: `draft` writes a draft, `ask` asks the user to approve it, `review` routes a
rejection back to `draft` and an approval to `publish`. The user rejects once, then approves.

Run with `resumable` as the first argument, the app is resumable: it checkpoints node statuses and
ends with an end-of-agent marker.
"""

import sys

from google.adk import Context, Event
from google.adk.events.request_input import RequestInput
from google.adk.workflow import START, Workflow

import _harness


def draft(ctx: Context, node_input) -> str:
  return f"draft {ctx.run_id}"


async def ask(ctx: Context, node_input: str):
  yield RequestInput(
      interrupt_id=f"approve-{ctx.run_id}",
      message="Approve the draft?",
      payload={"draft": node_input},
  )


def review(node_input: dict):
  approved = node_input.get("approved") is True
  return Event(output=node_input, route="approved" if approved else "rejected")


def publish(node_input: dict) -> str:
  return "published"


root = Workflow(
    name="approval_wf",
    edges=[
        (START, draft, ask, review, {"approved": publish, "rejected": draft}),
    ],
)

resumable = len(sys.argv) > 1 and sys.argv[1] == "resumable"
_harness.run(
    root,
    [
        _harness.user("write it"),
        _harness.answer("approve-1", "adk_request_input", {"approved": False}),
        _harness.answer("approve-2", "adk_request_input", {"approved": True}),
    ],
    resumable=resumable,
)
