"""Runs one parity scenario on ADK Python and prints what happened as JSON lines.

Each scenario script builds an app and a list of turns and calls `run`. Every line printed is one
JSON object: `{"turn": n, "event": {...}}` for each event the runner yields (as the API server
dumps it), `{"turn": n, "request": {...}}` for each model request (the contents the model saw and
the names of the tools it was offered), and `{"turn": n, "error": {...}}` when a turn fails. The
Rust side runs the same scenario on adk-rs and compares the lines.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, AsyncGenerator

from google.adk.apps.app import App, ResumabilityConfig
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

_TURN = {"n": 0}


def _emit(kind: str, value: Any) -> None:
  print(json.dumps({"turn": _TURN["n"], kind: value}, sort_keys=True), flush=True)


def text(value: str) -> LlmResponse:
  """A model answer made of one text part."""
  return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=value)]))


def call(name: str, args: dict[str, Any], call_id: str) -> LlmResponse:
  """A model answer that calls one function, with an explicit call id."""
  return LlmResponse(
      content=types.Content(
          role="model",
          parts=[types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))],
      )
  )


class ScriptedLlm(BaseLlm):
  """A model that answers each request with the next response of its script."""

  script: list[LlmResponse] = []

  async def generate_content_async(
      self, llm_request: LlmRequest, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    contents = [c.model_dump(exclude_none=True, by_alias=True, mode="json") for c in llm_request.contents]
    tools = sorted(llm_request.tools_dict.keys())
    _emit("request", {"model": self.model, "contents": contents, "tools": tools})
    if not self.script:
      raise RuntimeError("the scripted model has no answer left")
    yield self.script.pop(0)


def scripted(name: str, *responses: LlmResponse) -> ScriptedLlm:
  return ScriptedLlm(model=name, script=list(responses))


def user(value: str) -> types.Content:
  return types.Content(role="user", parts=[types.Part(text=value)])


def answer(call_id: str, name: str, response: dict[str, Any]) -> types.Content:
  """The user's function response to call `call_id`."""
  return types.Content(
      role="user",
      parts=[types.Part(function_response=types.FunctionResponse(id=call_id, name=name, response=response))],
  )


def run(root: Any, turns: list[types.Content], *, resumable: bool = False, app_name: str = "parity") -> None:
  """Runs `turns` one after another in one session of an app whose root is `root`."""

  async def go() -> None:
    app = App(
        name=app_name,
        root_agent=root,
        resumability_config=ResumabilityConfig(is_resumable=True) if resumable else None,
    )
    sessions = InMemorySessionService()
    runner = Runner(app=app, session_service=sessions)
    session = await sessions.create_session(app_name=app_name, user_id="user", session_id="s1")
    for index, message in enumerate(turns):
      _TURN["n"] = index
      try:
        async for event in runner.run_async(user_id="user", session_id=session.id, new_message=message):
          _emit("event", event.model_dump(exclude_none=True, by_alias=True, mode="json"))
      except Exception as error:  # noqa: BLE001 - the failure is what the scenario records
        _emit("error", {"type": type(error).__name__, "message": str(error)})

  asyncio.run(go())
  sys.stdout.flush()
