import { describe, expect, it } from "vitest";
import { historyMessages } from "@/lib/thread-history";
import type { ThreadDetail } from "@/lib/types";

const QUESTION = "What does the handbook say about remote work?";
const stoppedTurn: ThreadDetail["messages"] = [
  { role: "user", content: QUESTION },
  { role: "assistant", content: "Remote work from abroad is allowed for at most", status: "stopped" },
];
const thread = (extra: Partial<ThreadDetail>): ThreadDetail => ({
  thread_id: "t1",
  title: QUESTION,
  scope: [],
  messages: stoppedTurn,
  ...extra,
});
const running = {
  run_id: "r1",
  thread_id: "t1",
  question: QUESTION,
  status: "running" as const,
  created_at: "2026-11-28T10:00:00.000Z",
  last_event_id: 3,
};
const retryOf = (messages: ReturnType<typeof historyMessages>) => messages[1].request;

describe("a stopped answer read back from the thread", () => {
  it("offers Retry while its question was not asked again", () => {
    expect(retryOf(historyMessages(thread({}), "t1"))).toEqual({ message: QUESTION });
  });

  it("offers none once a later turn asked it again", () => {
    const again = [
      ...stoppedTurn,
      { role: "user" as const, content: QUESTION },
      { role: "assistant" as const, content: "…" },
    ];
    expect(retryOf(historyMessages(thread({ messages: again }), "t1"))).toBeUndefined();
  });

  it("offers none while its Retry is the answer being written (a reload mid-retry offered it again)", () => {
    expect(retryOf(historyMessages(thread({ active_run: running }), "t1"))).toBeUndefined();
  });

  it("still offers it when the answer being written asks something else", () => {
    const other = { ...running, question: "And the notice period?" };
    expect(retryOf(historyMessages(thread({ active_run: other }), "t1"))).toEqual({ message: QUESTION });
  });
});
