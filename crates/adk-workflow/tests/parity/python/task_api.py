"""The Task API over two user turns: a chat coordinator delegates to `researcher` (a task agent,
which asks the user a question and then finishes with `finish_task`) and to `formatter` (a
single-turn agent, called as a tool), then answers."""

from google.adk import Agent

import _harness

researcher = Agent(
    name="researcher",
    mode="task",
    description="Researches a topic.",
    model=_harness.scripted(
        "researcher-model",
        _harness.text("Which region?"),
        _harness.call("finish_task", {"result": "X in Europe"}, "f1"),
    ),
    instruction="Research.",
)
formatter = Agent(
    name="formatter",
    mode="single_turn",
    description="Formats a result.",
    model=_harness.scripted("formatter-model", _harness.text("**X in Europe**")),
    instruction="Format.",
)
coordinator = Agent(
    name="coordinator",
    model=_harness.scripted(
        "coordinator-model",
        _harness.call("researcher", {"request": "find X"}, "t1"),
        _harness.call("formatter", {"request": "X in Europe"}, "s1"),
        _harness.text("Here it is: **X in Europe**"),
    ),
    instruction="Coordinate.",
    sub_agents=[researcher, formatter],
)

_harness.run(coordinator, [_harness.user("research X"), _harness.user("Europe")])
