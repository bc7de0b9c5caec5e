"""A plain root agent with a tool: one call, its response, and the final answer."""

from google.adk import Agent

import _harness


def get_weather(city: str) -> dict:
  """Returns the weather of a city."""
  return {"city": city, "weather": "sunny"}


assistant = Agent(
    name="assistant",
    model=_harness.scripted(
        "assistant-model",
        _harness.call("get_weather", {"city": "Paris"}, "w1"),
        _harness.text("It is sunny in Paris."),
    ),
    instruction="Answer.",
    tools=[get_weather],
)

_harness.run(assistant, [_harness.user("weather in Paris?")])
