"""The prompt prefix shared by every model call of a turn: system prompt, then the recent exchanges."""

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from backend.graph.prompts import SYSTEM_PROMPT
from backend.graph.state import ChatState


def recent_exchanges(state: ChatState, turns: int) -> list[BaseMessage]:
    """The last `turns` question/answer pairs as plain text messages (no retrieved context)."""
    if turns <= 0:
        return []
    messages = [m for m in state.get("messages", []) if isinstance(m, HumanMessage | AIMessage)]
    return [type(m)(content=m.text) for m in messages[-2 * turns :]]


def prompt_prefix(state: ChatState, turns: int) -> list[BaseMessage]:
    """System prompt followed by the history window; byte-identical for every call in a turn."""
    return [SystemMessage(content=SYSTEM_PROMPT), *recent_exchanges(state, turns)]
