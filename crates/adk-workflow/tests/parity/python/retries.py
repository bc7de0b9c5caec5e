"""A failing node with retries: `flaky` fails twice and succeeds on its third attempt; in a second
session `broken` fails on every attempt, so the workflow stops with its error."""

from google.adk.workflow import RetryConfig, START, Workflow, node

import _harness

ATTEMPTS = {"flaky": 0}


@node(retry_config=RetryConfig(max_attempts=3, initial_delay=0.01, jitter=0.0))
def flaky(node_input: str) -> str:
  ATTEMPTS["flaky"] += 1
  if ATTEMPTS["flaky"] < 3:
    raise ValueError(f"attempt {ATTEMPTS['flaky']} failed")
  return "ok after " + str(ATTEMPTS["flaky"])


@node(retry_config=RetryConfig(max_attempts=2, initial_delay=0.01, jitter=0.0))
def broken(node_input: str) -> str:
  raise RuntimeError("always broken")


def after(node_input: str) -> str:
  return "after " + node_input


root = Workflow(name="retry_wf", edges=[(START, flaky, after)])
_harness.run(root, [_harness.user("go")])

failing = Workflow(name="failing_wf", edges=[(START, broken, after)])
_harness.run(failing, [_harness.user("go")], app_name="failing")
