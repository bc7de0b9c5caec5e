"""Nested workflows with a parallel worker and a dynamic node: the outer workflow runs an inner
workflow (which splits its input and upper-cases each item in parallel) and then `enrich`, which
runs `suffix` from inside itself as a dynamic node."""

from google.adk import Context
from google.adk.workflow import START, Workflow, node

import _harness


def split(node_input: str) -> list:
  return node_input.split(",")


@node(parallel_worker=True)
def work(node_input: str) -> str:
  return node_input.upper()


def suffix(node_input: list) -> str:
  return "+".join(node_input) + "!"


@node(rerun_on_resume=True)
async def enrich(ctx: Context, node_input: list) -> dict:
  joined = await ctx.run_node(suffix, node_input=node_input)
  return {"items": node_input, "joined": joined}


inner = Workflow(name="inner_wf", edges=[(START, split, work)])
root = Workflow(name="outer_wf", edges=[(START, inner, enrich)])

_harness.run(root, [_harness.user("a,b,c")])
