"""Prime every llama.cpp slot with the system prompt when the server starts.

Every prompt starts with the same system prompt, but a slot only caches what it has evaluated: on a fresh server
the first turn of each slot would prefill it (about 220 tokens, 5 s on the 1.5B model on 2 cores). One request
per slot that stops after one token leaves the system prompt and the chat template's user header in the slot's KV
cache, so first turns evaluate only their passages and question. The first slot primed is saved (llama.cpp's slot
save, keyed like a thread's file on the model, the layout and here the system prompt's text); every other slot, and
every slot after a restart, restores that file instead of evaluating, which takes milliseconds rather than a batch
of seconds that a turn arriving right after the start would have to wait for. The one evaluation, on a server that
has no file yet, holds its slot as a turn does and is never cancelled, so the file is written even when a question
arrives at once; restoring runs as background work of the model gate, which a turn that starts cancels.
"""

import hashlib
import logging

from langchain_core.messages import HumanMessage, SystemMessage

from backend.llm.factory import Models

log = logging.getLogger(__name__)


def primed_state(system: str) -> str:
    """The name the primed slot is saved under (as a thread id: KVCache hashes it into a file name)."""
    return f"system prompt {hashlib.sha256(system.encode()).hexdigest()[:16]}"


async def prime_slots(models: Models, system: str) -> int:
    """Restore or evaluate the system prompt in every free slot; the number of slots primed."""
    if not models.pin_slots:
        return 0
    primed: set[int] = set()
    saved = primed_state(system)
    if models.kv is not None and not models.kv.has(saved) and not models.gate.busy:
        if (slot := await evaluated_and_saved(models, system, saved)) is None:
            return 0
        primed.add(slot)
    for _ in range(models.gate.size):
        async with models.gate.background() as slot:
            if slot is None or slot < 0 or slot in primed:  # busy, or the others are taken by turns already
                break
            if models.kv is not None and await models.kv.load(slot, saved):
                primed.add(slot)
                continue
            if not await evaluate(models, slot, system):
                break
            primed.add(slot)
    log.info("system prompt cached in %d slot(s)", len(primed))
    return len(primed)


async def evaluated_and_saved(models: Models, system: str, saved: str) -> int | None:
    """Evaluate the system prompt in a slot held as a turn holds one, and save it; the slot (None: it failed).

    A turn arriving meanwhile does not cancel this: it would gain nothing (it would evaluate the same tokens itself
    in the slot it takes), the prefill batch under way would be lost, and with no file saved every restart would
    evaluate the system prompt again while its first follow-up waits (`./scripts/bench speed`).
    """
    slot = await models.gate.acquire()
    try:
        if not await evaluate(models, slot, system):
            return None
        await models.kv.save(slot, saved)  # type: ignore[union-attr]
        return slot
    finally:
        models.gate.release(slot)


async def evaluate(models: Models, slot: int, system: str) -> bool:
    """One request that stops after one token, leaving the system prompt in the slot's KV cache."""
    model = models.chat_model.bind(extra_body={"id_slot": slot, "cache_prompt": True}, max_tokens=1)
    try:
        await model.ainvoke([SystemMessage(content=system), HumanMessage(content=".")])
    except Exception as exc:  # priming only saves time: never let it stop the server
        log.warning("could not prime slot %d with the system prompt: %s", slot, exc)
        return False
    return True
