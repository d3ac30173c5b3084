/** A stored thread read back into the conversation's messages: plain data, no React. */
import type { ChatMessage } from "./chat-turn";
import type { ThreadDetail } from "./types";

/**
 * The thread's stored turns as messages (keys `h{i}-{id}`). A stopped or interrupted answer offers Retry until its
 * question was asked again later in the thread, by a stored turn or by the answer being written now (`active_run`);
 * a blocked question keeps "ask anyway" unless it was asked again so.
 */
export function historyMessages(detail: ThreadDetail, id: string): ChatMessage[] {
  const asked = detail.messages.filter((m) => m.role === "user").map((m) => m.content);
  if (detail.active_run) asked.push(detail.active_run.question);
  let usersSeen = 0;
  return detail.messages.map((m, i, all) => {
    if (m.role === "user") usersSeen++;
    const stopped = m.status === "stopped" || m.status === "interrupted";
    const question = i > 0 && all[i - 1].role === "user" ? all[i - 1].content : null;
    // a blocked question keeps "ask anyway" after a reload, unless it was asked again later in the thread
    const blocked = m.triage?.route === "blocked" && question !== null;
    const askedLater = question !== null && asked.slice(usersSeen).includes(question);
    const askedAgain = blocked && askedLater;
    return {
      key: `h${i}-${id}`,
      role: m.role,
      content: m.content,
      sources: m.sources ?? undefined,
      stored: {
        intent: m.intent,
        route_reason: m.route_reason,
        scope: m.scope,
        triage: m.triage,
        validation: m.validation,
        steps: m.steps,
      },
      state: stopped ? "stopped" : "history",
      // how long it took, as the live turn showed it ("· 12 s")
      ...(m.role === "assistant" && m.latency_ms != null ? { startedAt: 0, endedAt: m.latency_ms } : {}),
      ...(m.status === "interrupted" ? { interrupted: true } : {}),
      // a stopped answer offers Retry until its question was asked again later in the thread
      ...(((stopped && !askedLater) || blocked) && question ? { request: { message: question } } : {}),
      ...(askedAgain ? { askedAnyway: true } : {}),
    };
  });
}
