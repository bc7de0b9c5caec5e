"""Calls an A2A agent with the official a2a-sdk client and prints what it gets, one JSON line each.

Usage: sdk_client.py BASE_URL send|stream TEXT

Prints {"card": ...} first, then {"task": ..., "update": ...} for each (task, update) pair the
client yields, or {"message": ...} for a direct message.
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart


def dump(model):
    return None if model is None else model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main() -> None:
    base_url, mode, text = sys.argv[1:4]
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        print(json.dumps({"card": dump(card)}), flush=True)
        client = ClientFactory(ClientConfig(streaming=mode == "stream", httpx_client=http)).create(card)
        message = Message(
            role=Role.user,
            parts=[Part(root=TextPart(text=text))],
            message_id=str(uuid.uuid4()),
        )
        async for item in client.send_message(message):
            if isinstance(item, tuple):
                task, update = item
                print(json.dumps({"task": dump(task), "update": dump(update)}), flush=True)
            else:
                print(json.dumps({"message": dump(item)}), flush=True)


asyncio.run(main())
