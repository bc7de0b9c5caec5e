"""ADK Python's `adk web` Builder routes, driven in-process for the builder conformance test.

`python adk_web_builder.py AGENTS_DIR STEPS_JSON` serves the agents folder AGENTS_DIR with ADK's
FastAPI app (`web=True`, the dev server), sends each step of STEPS_JSON through Starlette's test
client (a step's `files` are uploaded as multipart form fields named `files`, as adk-web does), and
prints the answers as JSON: the status, and the body as JSON when it is JSON, else as text.
"""

import json
import os
import sys


def main(agents, steps_file):
  # The test client is not a loopback peer; ADK lets it reach the builder only with this set.
  os.environ["ADK_ALLOW_REMOTE_AGENT_BUILDER"] = "1"
  from fastapi.testclient import TestClient
  from google.adk.cli.fast_api import get_fast_api_app

  app = get_fast_api_app(agents_dir=agents, web=True, host="127.0.0.1", port=8000)
  client = TestClient(app, base_url="http://127.0.0.1:8000")
  with open(steps_file) as f:
    plan = json.load(f)
  answers = []
  for step in plan:
    files = step.get("files")
    if files is not None:
      uploads = [("files", (name, content.encode(), "application/x-yaml")) for name, content in files]
      response = client.request(step["method"], step["path"], files=uploads)
    else:
      response = client.request(step["method"], step["path"])
    try:
      answer = response.json()
    except ValueError:
      answer = response.text
    answers.append({"status": response.status_code, "body": answer})
  print(json.dumps(answers))


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2])
