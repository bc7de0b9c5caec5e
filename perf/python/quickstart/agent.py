"""The weather agent of adk-rs's quickstart example, written for ADK Python.

`cargo xtask bench --serve` serves it with ADK Python's `adk api_server` beside adk-rs's, against
the same loopback Gemini mock (reached through GOOGLE_GEMINI_BASE_URL): one `get_weather` tool
that reads a fixed table and remembers the city in the user's state, as the Rust example does.
"""

from google.adk.agents import Agent
from google.adk.tools import ToolContext

_WEATHER = {
    "paris": ("sunny", 21.0),
    "london": ("cloudy", 16.5),
    "tokyo": ("rainy", 19.0),
    "new york": ("windy", 12.0),
}


def get_weather(city: str, tool_context: ToolContext) -> dict:
  """Returns the sky and the temperature in a city.

  Args:
    city: The city to report on, for example "Paris".
  """
  found = _WEATHER.get(city.lower())
  if found is None:
    return {
        "error": f"no weather data for {city}; try Paris, London, Tokyo or New York"
    }
  tool_context.state["user:last_city"] = city
  sky, celsius = found
  return {"city": city, "sky": sky, "temperature": f"{celsius:g} °C"}


root_agent = Agent(
    name="weather_agent",
    model="gemini-2.5-flash",
    description="Answers questions about the weather in a city.",
    instruction=(
        "You answer questions about the weather. Call get_weather for the city the user asks"
        " about, then answer in one short sentence. The user last asked about:"
        " {user:last_city?}."
    ),
    tools=[get_weather],
)
