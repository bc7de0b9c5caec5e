"""Golden JSON from the official a2a-sdk's pydantic models.

Reads {"<name>": {"type": "<a2a.types class>", "json": <object>}, ...} on stdin, validates each
object with the SDK's model of that type, and prints {"checked": {"<name>": <the SDK's own JSON
of it>}, "native": {"<name>": {"type": ..., "json": ...}}}, where "native" holds objects the SDK
built itself.
"""

import json
import sys

from a2a import types as t


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def native():
    text = t.Part(root=t.TextPart(text="Hello", metadata={"adk_thought": True}))
    file_bytes = t.Part(root=t.FilePart(file=t.FileWithBytes(bytes="AAEC", mime_type="image/png", name="dot.png")))
    file_uri = t.Part(root=t.FilePart(file=t.FileWithUri(uri="gs://bucket/report.pdf", mime_type="application/pdf")))
    data = t.Part(root=t.DataPart(
        data={"id": "c1", "args": {"city": "Paris"}, "name": "get_weather"},
        metadata={"adk_type": "function_call", "adk_is_long_running": True},
    ))
    message = t.Message(
        role=t.Role.agent, parts=[text, file_bytes, file_uri, data], message_id="m-1",
        task_id="t-1", context_id="c-1",
    )
    status = t.TaskStatus(state=t.TaskState.input_required, message=message, timestamp="2026-01-01T00:00:00Z")
    artifact = t.Artifact(artifact_id="a-1", parts=[text], name="answer")
    task = t.Task(id="t-1", context_id="c-1", status=status, history=[message], artifacts=[artifact])
    status_update = t.TaskStatusUpdateEvent(task_id="t-1", context_id="c-1", status=status, final=True)
    artifact_update = t.TaskArtifactUpdateEvent(task_id="t-1", context_id="c-1", artifact=artifact, last_chunk=True)
    error = t.JSONRPCErrorResponse(id="r-1", error=t.MethodNotFoundError())
    card = t.AgentCard(
        name="weather", description="Weather.", url="http://127.0.0.1:8001/", version="1.0.0",
        capabilities=t.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[t.AgentSkill(id="w", name="weather", description="Weather.", tags=["llm"])],
        security_schemes={"bearer": t.SecurityScheme(root=t.HTTPAuthSecurityScheme(scheme="bearer"))},
        security=[{"bearer": []}],
    )
    params = t.MessageSendParams(message=message, configuration=t.MessageSendConfiguration(blocking=True, history_length=2))
    return {
        "message": ("Message", message),
        "task": ("Task", task),
        "status_update": ("TaskStatusUpdateEvent", status_update),
        "artifact_update": ("TaskArtifactUpdateEvent", artifact_update),
        "error_response": ("JSONRPCErrorResponse", error),
        "card": ("AgentCard", card),
        "send_params": ("MessageSendParams", params),
    }


def main() -> None:
    given = json.load(sys.stdin)
    checked = {}
    for name, entry in given.items():
        model = getattr(t, entry["type"]).model_validate(entry["json"])
        checked[name] = dump(model)
    built = {name: {"type": kind, "json": dump(model)} for name, (kind, model) in native().items()}
    print(json.dumps({"checked": checked, "native": built}))


main()
