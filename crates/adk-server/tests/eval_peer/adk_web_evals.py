"""ADK Python's `adk web` eval routes, driven in-process for the eval conformance test.

`python adk_web_evals.py steps WORK_DIR STEPS_JSON` makes app `weather` in WORK_DIR/agents (an
agent with a `get_weather` tool on a scripted model: a call, then an answer), sends each step of
STEPS_JSON to ADK's FastAPI app through Starlette's test client, and prints the answers as JSON.

`python adk_web_evals.py read EVAL_DIR APP` reads the eval sets and results adk-rs wrote in
EVAL_DIR with ADK's local eval managers, and prints what it found.

ADK's eval modules import pandas and the Vertex AI SDK at module level, for metrics these tests
do not run; empty stand-ins for those imports keep the virtualenv small.
"""

import json
import os
import sys
import types


class _Absent(types.ModuleType):
  """An import nothing here uses: any attribute is another stand-in."""

  def __getattr__(self, name):
    if name.startswith("__"):
      raise AttributeError(name)
    return _Absent(name)

  def __call__(self, *args, **kwargs):
    return _Absent("call")


for _name in ["pandas", "agentplatform", "agentplatform.types", "vertexai",
              "vertexai.types", "vertexai.preview", "vertexai.preview.evaluation",
              "tabulate", "gepa"]:
  sys.modules.setdefault(_name, _Absent(_name))

AGENT = '''
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class Scripted(BaseLlm):
  model: str = "scripted"

  async def generate_content_async(self, llm_request, stream=False):
    last = llm_request.contents[-1].parts[-1]
    if last.function_response is None:
      part = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))
    else:
      part = types.Part(text="Sunny in Paris.")
    yield LlmResponse(content=types.Content(role="model", parts=[part]))


def get_weather(city: str) -> dict:
  """Reports the weather in a city."""
  return {"sky": "sunny", "city": city}


root_agent = LlmAgent(name="weather_agent", model=Scripted(), instruction="Answer about the weather.", tools=[get_weather])
'''


def steps(work_dir, steps_file):
  agents = os.path.join(work_dir, "agents")
  os.makedirs(os.path.join(agents, "weather"), exist_ok=True)
  with open(os.path.join(agents, "weather", "__init__.py"), "w") as f:
    f.write("from . import agent\n")
  with open(os.path.join(agents, "weather", "agent.py"), "w") as f:
    f.write(AGENT)
  # The test client is not a loopback peer; ADK lets it write eval sets only with this set.
  os.environ["ADK_ALLOW_REMOTE_AGENT_BUILDER"] = "1"
  from fastapi.testclient import TestClient
  from google.adk.cli.fast_api import get_fast_api_app

  app = get_fast_api_app(agents_dir=agents, web=True, host="127.0.0.1", port=8000)
  client = TestClient(app, base_url="http://127.0.0.1:8000")
  with open(steps_file) as f:
    plan = json.load(f)
  answers = []
  case = None
  result = None
  for step in plan:
    path = step["path"].replace("{result}", result or "none")
    body = step.get("body")
    if body == "$case":
      body = case
    elif isinstance(body, str) and body.startswith("$case:"):
      body = dict(case, evalId=body[len("$case:"):])
    response = client.request(step["method"], path, json=body)
    try:
      answer = response.json()
    except ValueError:
      answer = response.text
    if step.get("keep") == "case":
      case = answer
    if step.get("keep") == "result" and answer:
      result = answer[0]
    answers.append({"status": response.status_code, "body": answer})
  print(json.dumps(answers))


def read(eval_dir, app):
  from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
  from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager

  sets = LocalEvalSetsManager(agents_dir=eval_dir)
  results = LocalEvalSetResultsManager(agents_dir=eval_dir)
  found = {"sets": {}, "results": {}}
  for set_id in sets.list_eval_sets(app):
    found["sets"][set_id] = [case.eval_id for case in sets.get_eval_set(app, set_id).eval_cases]
  for result_id in results.list_eval_set_results(app):
    result = results.get_eval_set_result(app, result_id)
    found["results"][result_id] = [
        {metric.metric_name: metric.score for metric in case.overall_eval_metric_results}
        for case in result.eval_case_results
    ]
  print(json.dumps(found))


if __name__ == "__main__":
  if sys.argv[1] == "steps":
    steps(sys.argv[2], sys.argv[3])
  else:
    read(sys.argv[2], sys.argv[3])
