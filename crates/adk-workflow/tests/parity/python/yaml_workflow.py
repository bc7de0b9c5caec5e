"""A workflow described in YAML (`yamlwf/root_agent.yaml`), whose nodes are functions named by
their dotted path."""

import os

from google.adk.agents import config_agent_utils

import _harness

here = os.path.dirname(os.path.abspath(__file__))
root = config_agent_utils.from_config(os.path.join(here, "yamlwf", "root_agent.yaml"))
_harness.run(root, [_harness.user("apple"), _harness.user("banana")])
