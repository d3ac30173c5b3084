"""Priming the slots with the system prompt at start: every free slot once, none a turn holds, never the fake."""

from langchain_core.messages import SystemMessage

from backend.llm.factory import Models
from backend.llm.fake import ScriptedChatModel
from backend.llm.gate import ModelGate
from backend.llm.prime import prime_slots


def models(slots: int, pin: bool = True) -> tuple[Models, ScriptedChatModel]:
    chat = ScriptedChatModel()
    return Models("embedded", "m", chat, None, "e", ModelGate(slots), pin_slots=pin), chat


async def test_every_free_slot_gets_the_system_prompt_once():
    m, chat = models(2)
    assert await prime_slots(m, "SYSTEM") == 2
    assert len(chat.calls) == 2
    assert all(isinstance(c[0], SystemMessage) and c[0].text == "SYSTEM" for c in chat.calls)
    assert m.gate.free == 2  # both slots handed back


async def test_nothing_is_primed_while_a_turn_runs():
    m, chat = models(2)
    held = await m.gate.acquire(thread="t")
    assert await prime_slots(m, "SYSTEM") == 0
    assert chat.calls == []
    m.gate.release(held, "t")


async def test_backends_without_slots_are_not_primed():
    m, chat = models(0, pin=False)
    assert await prime_slots(m, "SYSTEM") == 0 and chat.calls == []
