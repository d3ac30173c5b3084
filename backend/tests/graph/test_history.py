"""The prompt that only grows: turn N's prompt and answer are the start of turn N+1's, across window cuts."""

from langchain_core.messages import BaseMessage

from backend.graph.history import prefix, shown_ids, window
from backend.graph.nodes.generator import user_message
from backend.settings import Settings


def settings(**values) -> Settings:
    return Settings(llm_backend="fake", **values)


def run_turns(n: int, cfg: Settings, chars: int = 400, contexts: list[str] | None = None) -> list[list[str]]:
    """Simulate n turns the way the generator and the memory node do; the prompt texts of each turn (turn i asked
    with user context contexts[i], when given)."""
    state: dict = {"transcript": [], "qa_index": [], "use_memory": True, "intent": "chat"}
    prompts = []
    for i in range(n):
        state["question"] = f"question {i} " + "x" * chars
        text, ids = user_message(state, cfg, contexts[i] if contexts else "")
        win = window(state, cfg)
        prompts.append([m.text for m in prefix(state, cfg)] + [text])
        answer = f"answer {i}"
        state["transcript"] = [
            *state["transcript"],
            {"question": state["question"], "prompt": text, "answer": answer, "sources": ids},
        ]
        state["qa_index"] = [*state["qa_index"], {"id": i + 1, "question": state["question"]}]
        state["window_start"], state["window_note"] = win.start, win.note
        prompts[-1].append(answer)
    return prompts


def is_prefix(a: list[str], b: list[str]) -> bool:
    return b[: len(a)] == a


def test_each_turns_prompt_and_answer_start_the_next_turns_prompt_until_a_cut():
    prompts = run_turns(5, settings(history_turns=6, history_token_budget=100_000))
    assert all(is_prefix(prompts[i], prompts[i + 1]) for i in range(4))


def test_the_window_is_cut_in_one_large_step_then_grows_again_for_several_turns():
    prompts = run_turns(14, settings(history_turns=6, history_token_budget=100_000))
    grows = [is_prefix(prompts[i], prompts[i + 1]) for i in range(13)]
    cuts = [i + 1 for i, g in enumerate(grows) if not g]
    assert cuts == [6, 10]  # 6 turns shown: cut to the last 2, which grow to 6 again four turns later
    after = prompts[6]
    assert "question 4" in after[1] and "question 0" in after[0]  # kept turns verbatim; earlier ones in the note


def test_the_token_budget_also_cuts_and_keeps_at_most_half_of_it():
    cfg = settings(history_turns=100, history_token_budget=600)
    prompts = run_turns(8, cfg, chars=400)  # about 110 tokens per turn
    cuts = [i + 1 for i in range(7) if not is_prefix(prompts[i], prompts[i + 1])]
    assert cuts and all(sum(len(t) for t in p[1:-2]) // 4 <= 600 for p in prompts)


def test_passages_shown_in_the_window_are_known_by_id():
    state = {"transcript": [{"question": "q", "prompt": "p", "answer": "a", "sources": ["S1", "S3"]}]}
    assert shown_ids(state, settings()) == {"S1", "S3"}
    assert shown_ids({**state, "use_memory": False}, settings()) == set()


def test_prefix_is_the_same_for_every_call_of_a_turn():
    state = {"transcript": [{"question": "q", "prompt": "p", "answer": "a", "sources": []}] * 7, "qa_index": []}
    cfg = settings(history_turns=6)
    first: list[BaseMessage] = prefix(state, cfg)
    assert [m.text for m in prefix(state, cfg)] == [m.text for m in first]


def test_the_prompt_style_chooses_the_system_prompt_and_each_style_still_only_grows():
    from backend.graph.prompts import SYSTEM_PROMPTS

    texts = {style: prefix({"transcript": []}, settings(prompt_style=style))[0].text for style in SYSTEM_PROMPTS}
    assert texts == SYSTEM_PROMPTS and len(set(texts.values())) == 3
    for style in SYSTEM_PROMPTS:
        prompts = run_turns(4, settings(prompt_style=style))
        assert prompts[0][0] == SYSTEM_PROMPTS[style]
        assert all(is_prefix(a, b) for a, b in zip(prompts, prompts[1:], strict=False))


def test_the_user_context_is_stated_once_then_again_only_when_it_changes_and_the_prompt_still_grows():
    same, changed = "Asked by Ann (Field engineer).", "Asked by Ann (Field engineer). Answer in German."
    prompts = run_turns(
        4, settings(history_turns=6, history_token_budget=100_000), contexts=[same, same, changed, changed]
    )
    stated = [sum(same in m or changed in m for m in p[-2:-1]) for p in prompts]  # this turn's own message
    assert stated == [1, 0, 1, 0]
    assert all(is_prefix(prompts[i], prompts[i + 1]) for i in range(3))


def test_the_user_context_is_stated_again_once_the_window_has_cut_the_turn_that_stated_it():
    cfg = settings(history_turns=2, history_token_budget=100_000)
    prompts = run_turns(6, cfg, contexts=["Asked by Ann."] * 6)
    assert all(any("Asked by Ann." in m for m in p[:-1]) for p in prompts)  # every prompt shows it somewhere
    assert sum("Asked by Ann." in p[-2] for p in prompts) >= 2  # restated after the first was cut away
