"""Prime every llama.cpp slot with the system prompt when the server starts.

Every prompt starts with the same system prompt, but a slot only caches what it has evaluated: on a fresh server
the first turn of each slot would prefill it (about 220 tokens, 5 s on the 1.5B model on 2 cores). One request
per slot that stops after one token leaves the system prompt and the chat template's user header in the slot's KV
cache, so first turns evaluate only their passages and question. The requests run as background work of the model
gate: a turn that starts cancels them.
"""

import logging

from langchain_core.messages import HumanMessage, SystemMessage

from backend.llm.factory import Models

log = logging.getLogger(__name__)


async def prime_slots(models: Models, system: str) -> int:
    """Evaluate the system prompt in every free slot; the number of slots primed."""
    if not models.pin_slots:
        return 0
    primed: set[int] = set()
    for _ in range(models.gate.size):
        async with models.gate.background() as slot:
            if slot is None or slot < 0 or slot in primed:  # busy, or the others are taken by turns already
                break
            model = models.chat_model.bind(extra_body={"id_slot": slot, "cache_prompt": True}, max_tokens=1)
            try:
                await model.ainvoke([SystemMessage(content=system), HumanMessage(content=".")])
            except Exception as exc:  # priming only saves time: never let it stop the server
                log.warning("could not prime slot %d with the system prompt: %s", slot, exc)
                break
            primed.add(slot)
    log.info("system prompt cached in %d slot(s)", len(primed))
    return len(primed)
