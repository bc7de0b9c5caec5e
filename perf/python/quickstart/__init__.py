"""The quickstart weather agent for ADK Python, served by `cargo xtask bench --serve`."""

from . import agent
