"""Priming the slots with the system prompt at start: every free slot once, none a turn holds, never the fake."""

import asyncio
from typing import Any

from langchain_core.messages import SystemMessage
from langchain_core.outputs import ChatResult

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


class FakeSlotFiles:
    """A fake of KVCache's load and save: slot states kept by name in a dict, no llama.cpp."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.loaded: list[int] = []

    def has(self, name: str) -> bool:
        return name in self.files

    async def load(self, slot: int, name: str) -> int:
        if name not in self.files:
            return 0
        self.loaded.append(slot)
        return 200

    async def save(self, slot: int, name: str) -> int:
        self.files.add(name)
        return 1


async def test_the_first_slot_evaluated_is_saved_and_the_others_restore_it():
    m, chat = models(2)
    m.kv = FakeSlotFiles()
    assert await prime_slots(m, "SYSTEM") == 2
    assert len(chat.calls) == 1 and m.kv.loaded == [1]  # slot 0 evaluated the prompt, slot 1 read its file


async def restarted(files: FakeSlotFiles, system: str) -> ScriptedChatModel:
    """Prime a server with "SYSTEM" and then a new one, both keeping slots in `files`; the new one's chat model."""
    first, _ = models(2)
    first.kv = files
    await prime_slots(first, "SYSTEM")
    again, chat = models(2)
    again.kv = files
    assert await prime_slots(again, system) == 2
    return chat


async def test_after_a_restart_every_slot_restores_and_nothing_is_evaluated():
    files = FakeSlotFiles()
    chat = await restarted(files, "SYSTEM")
    assert chat.calls == [] and sorted(files.loaded) == [0, 1, 1]


async def test_another_system_prompt_is_not_restored_from_the_old_file():
    chat = await restarted(FakeSlotFiles(), "ANOTHER SYSTEM PROMPT")
    assert len(chat.calls) == 1


class HeldChatModel(ScriptedChatModel):
    """The scripted fake, whose calls wait until the test lets them finish (a prefill under way)."""

    started: Any = None
    go_on: Any = None

    async def _agenerate(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.started.set()
        await self.go_on.wait()
        return self._generate(messages, stop, None, **kwargs)


async def test_a_turn_arriving_during_the_first_evaluation_does_not_cancel_it_and_the_file_is_saved():
    chat = HeldChatModel(started=asyncio.Event(), go_on=asyncio.Event())
    m = Models("embedded", "m", chat, None, "e", ModelGate(2), pin_slots=True)
    m.kv = files = FakeSlotFiles()
    priming = asyncio.create_task(prime_slots(m, "SYSTEM"))
    await chat.started.wait()
    turn = await m.gate.acquire(thread="t")  # takes the other slot at once; no background work to pre-empt
    chat.go_on.set()
    assert await priming == 1  # the evaluated slot; the other is the turn's
    assert not priming.cancelled() and len(chat.calls) == 1 and len(files.files) == 1
    m.gate.release(turn, "t")
