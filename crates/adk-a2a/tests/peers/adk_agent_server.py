"""An ADK Python agent exposed over A2A with `to_a2a`; its Gemini model talks to a loopback mock.

Usage: adk_agent_server.py PORT GEMINI_BASE_URL
"""

import sys

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini


def main() -> None:
    port = int(sys.argv[1])
    gemini_base_url = sys.argv[2]
    agent = LlmAgent(
        name="python_agent",
        description="An ADK Python agent that answers questions about France.",
        instruction="Answer questions about France.",
        model=Gemini(model="gemini-2.5-flash", base_url=gemini_base_url),
    )
    app = to_a2a(agent, host="127.0.0.1", port=port)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


main()
