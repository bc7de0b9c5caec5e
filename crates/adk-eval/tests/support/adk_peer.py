"""ADK Python's side of the eval compatibility tests: reads one JSON request on stdin and answers
with JSON on stdout, using google-adk's own evaluation code."""

import json
import sys

from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.eval_config import get_eval_metrics_from_config
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.eval_metrics import ToolTrajectoryCriterion
from google.adk.evaluation.eval_result import EvalSetResult
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
from google.adk.evaluation.final_response_match_v1 import _calculate_rouge_1_scores
from google.adk.evaluation.eval_case import get_all_tool_calls
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
from nltk.stem import porter


def text_of(content):
  if content is None or not content.parts:
    return ""
  return "\n".join(part.text for part in content.parts if part.text)


def calls_of(invocation):
  return [
      {"name": call.name, "args": call.args or {}}
      for call in get_all_tool_calls(invocation.intermediate_data)
  ]


def rouge(request):
  scores = []
  for candidate, reference in request["pairs"]:
    score = _calculate_rouge_1_scores(candidate, reference)
    scores.append([score.precision, score.recall, score.fmeasure])
  return scores


def stem(request):
  stemmer = porter.PorterStemmer()
  return [stemmer.stem(word) for word in request["words"]]


def read_eval_set(request):
  eval_set = EvalSet.model_validate_json(request["text"])
  cases = []
  for case in eval_set.eval_cases:
    cases.append({
        "eval_id": case.eval_id,
        "state": case.session_input.state if case.session_input else None,
        "invocations": [
            {
                "user": text_of(invocation.user_content),
                "final": text_of(invocation.final_response),
                "calls": calls_of(invocation),
            }
            for invocation in case.conversation
        ],
    })
  return {"eval_set_id": eval_set.eval_set_id, "cases": cases}


def read_config(request):
  config = EvalConfig.model_validate_json(request["text"])
  return [
      [metric.metric_name, metric.threshold]
      for metric in get_eval_metrics_from_config(config)
      if metric.threshold is not None
  ]


def score_result(request):
  """Reads a result file and scores its invocations again with ADK's evaluators."""
  result = EvalSetResult.model_validate_json(request["text"])
  cases = []
  for case in result.eval_case_results:
    actual = [entry.actual_invocation for entry in case.eval_metric_result_per_invocation]
    expected = [entry.expected_invocation for entry in case.eval_metric_result_per_invocation]
    rescored = {}
    for metric in case.overall_eval_metric_results:
      criterion = metric.criterion.model_dump() if metric.criterion else {}
      if metric.metric_name == "tool_trajectory_avg_score":
        evaluator = TrajectoryEvaluator(
            eval_metric=EvalMetric(
                metric_name=metric.metric_name,
                threshold=metric.threshold,
                criterion=ToolTrajectoryCriterion.model_validate(criterion),
            )
        )
      elif metric.metric_name == "response_match_score":
        evaluator = RougeEvaluator(
            EvalMetric(metric_name=metric.metric_name, threshold=metric.threshold)
        )
      else:
        continue
      evaluation = evaluator.evaluate_invocations(actual, expected)
      rescored[metric.metric_name] = [
          evaluation.overall_score,
          evaluation.overall_eval_status.value,
          [entry.score for entry in evaluation.per_invocation_results],
      ]
    cases.append({
        "eval_id": case.eval_id,
        "final_eval_status": case.final_eval_status.value,
        "written": {
            metric.metric_name: [metric.score, metric.eval_status.value]
            for metric in case.overall_eval_metric_results
        },
        "rescored": rescored,
        "session_events": len(case.session_details.events) if case.session_details else None,
    })
  return {"eval_set_id": result.eval_set_id, "cases": cases}


def write_eval_set(request):
  """An eval set as ADK's eval set manager writes it to disk."""
  eval_set = EvalSet.model_validate(request["eval_set"])
  return eval_set.model_dump_json(
      indent=2, exclude_unset=True, exclude_defaults=True, exclude_none=True
  )


def read_scenarios(request):
  """A scenarios file, an eval set of scenario cases and a config with a user simulator, read as
  `adk eval_set add_eval_case` and `adk eval` read them."""
  from google.adk.evaluation.conversation_scenarios import ConversationScenarios

  scenarios = ConversationScenarios.model_validate_json(request["scenarios"])
  eval_set = EvalSet.model_validate_json(request["eval_set"])
  config = EvalConfig.model_validate_json(request["config"])
  simulator = config.user_simulator_config
  return {
      "scenarios": [
          {
              "starting_prompt": scenario.starting_prompt,
              "conversation_plan": scenario.conversation_plan,
              "persona": scenario.user_persona.id if scenario.user_persona else None,
          }
          for scenario in scenarios.scenarios
      ],
      "eval_set_plans": [
          case.conversation_scenario.conversation_plan for case in eval_set.eval_cases
      ],
      "config": {
          "max_allowed_invocations": simulator.max_allowed_invocations,
          "include_function_calls": simulator.include_function_calls,
          "model": simulator.model,
          "metrics": [
              [metric.metric_name, metric.threshold]
              for metric in get_eval_metrics_from_config(config)
              if metric.threshold is not None
          ],
      },
  }


COMMANDS = {
    "read_scenarios": read_scenarios,
    "rouge": rouge,
    "stem": stem,
    "read_eval_set": read_eval_set,
    "read_config": read_config,
    "score_result": score_result,
    "write_eval_set": write_eval_set,
}

if __name__ == "__main__":
  request = json.load(sys.stdin)
  json.dump(COMMANDS[request["command"]](request), sys.stdout)
