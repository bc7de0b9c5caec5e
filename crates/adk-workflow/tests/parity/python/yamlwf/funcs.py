"""The functions the YAML workflow's nodes name."""

from google.adk import Event


def upper(node_input: str) -> str:
  return node_input.upper()


def route(node_input: str):
  return Event(output=node_input, route="a" if node_input.startswith("A") else "b")


def on_a(node_input: str) -> str:
  return "took a: " + node_input


def on_b(node_input: str) -> str:
  return "took b: " + node_input
