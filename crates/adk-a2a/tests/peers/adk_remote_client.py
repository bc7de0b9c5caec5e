"""An ADK Python root agent with a RemoteA2aAgent sub-agent: the root's Gemini model (a loopback
mock) transfers to the remote agent, which is called over A2A. Prints every event as a JSON line.

Usage: adk_remote_client.py CARD_URL GEMINI_BASE_URL TEXT...
Each TEXT is one user turn in the same session.
"""

import asyncio
import sys

from google.adk.a2a.agent import RemoteA2aAgent
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types


async def main() -> None:
    card_url, gemini_base_url, *turns = sys.argv[1:]
    remote = RemoteA2aAgent(
        name="rust_agent",
        description="An adk-rs agent that answers questions about Rust.",
        agent_card=card_url,
    )
    root = LlmAgent(
        name="python_root",
        instruction="Hand questions about Rust to rust_agent.",
        model=Gemini(model="gemini-2.5-flash", base_url=gemini_base_url),
        sub_agents=[remote],
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name="python_app", agent=root, session_service=sessions)
    session = await sessions.create_session(app_name="python_app", user_id="ada")
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ada", session_id=session.id, new_message=message):
            print(event.model_dump_json(by_alias=True, exclude_none=True), flush=True)


asyncio.run(main())
