"""ADK Python's DatabaseSessionService driven from the command line, for adk-rs's interop tests.

Usage: adk_sessions.py COMMAND DATABASE_URL SEARCH_PATH
  write   creates session s1 of user ada in app interop with state in every scope and appends
          a user message with bytes, a function call with a state delta, and its response
  read    loads session s1
  append  loads session s1 and appends a model reply with bytes and a state delta
SEARCH_PATH names the PostgreSQL schema to use ("-" for none). Every command prints the session
as ADK Python sees it, as JSON (absent values left out), on stdout.
"""

import asyncio
import json
import sys

from google.adk.events import Event, EventActions
from google.adk.sessions import DatabaseSessionService
from google.genai import types

APP, USER, SESSION = "interop", "ada", "s1"


def service(url, search_path):
    options = {}
    if search_path != "-":
        options["connect_args"] = {"server_settings": {"search_path": search_path}}
    return DatabaseSessionService(url, **options)


async def write(sessions):
    session = await sessions.create_session(
        app_name=APP,
        user_id=USER,
        session_id=SESSION,
        state={"app:theme": "dark", "user:name": "Ada", "topic": "weather", "temp:scratch": 1},
    )
    blob = types.Blob(mime_type="application/octet-stream", data=b"\x00\xff\xfe py bytes")
    message = types.Content(role="user", parts=[types.Part(text="weather?"), types.Part(inline_data=blob)])
    await sessions.append_event(session, Event(invocation_id="py-1", author="user", content=message))
    call = types.FunctionCall(id="call-1", name="get_weather", args={"city": "Paris"})
    await sessions.append_event(
        session,
        Event(
            invocation_id="py-1",
            author="assistant",
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
            actions=EventActions(
                state_delta={"app:calls": 1, "user:city": "Paris", "asked": True, "temp:t": 2}
            ),
        ),
    )
    response = types.FunctionResponse(id="call-1", name="get_weather", response={"sky": "clear"})
    await sessions.append_event(
        session,
        Event(
            invocation_id="py-1",
            author="assistant",
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
        ),
    )


async def append(sessions):
    session = await sessions.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    blob = types.Blob(mime_type="image/png", data=b"\x89PNG\r\n\x1a\n from python")
    reply = types.Content(role="model", parts=[types.Part(text="python adds"), types.Part(inline_data=blob)])
    await sessions.append_event(
        session,
        Event(
            invocation_id="py-2",
            author="assistant",
            content=reply,
            actions=EventActions(state_delta={"app:theme": "light", "user:seen": 2, "py": "yes"}),
        ),
    )


async def main():
    command, url, search_path = sys.argv[1:4]
    sessions = service(url, search_path)
    try:
        if command == "write":
            await write(sessions)
        elif command == "append":
            await append(sessions)
        elif command != "read":
            raise SystemExit(f"unknown command {command}")
        session = await sessions.get_session(app_name=APP, user_id=USER, session_id=SESSION)
        print(json.dumps(session.model_dump(mode="json", exclude_none=True)))
    finally:
        await sessions.close()


asyncio.run(main())
