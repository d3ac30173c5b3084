/** One answer's life as plain data: SSE events folded into a message, with no React in sight. */
import type {
  ChatEvent,
  DoneEvent,
  GuardrailMode,
  Mode,
  Scope,
  Source,
  StatusEvent,
  Triage,
  Validation,
} from "./types";

export interface StatusStep {
  node: string;
  label: string;
  detail: string | null;
  /** The end event's label when it says something new (e.g. an @mention that matched no document). */
  note?: string;
  startedAt: number;
  endedAt?: number;
  /** The turn ended (stop, restart, error) before this step did. */
  unfinished?: boolean;
}

export type TurnState = "history" | "streaming" | "done" | "stopped" | "error";

export interface ChatMessage {
  key: string;
  role: "user" | "assistant";
  content: string;
  state: TurnState;
  sources?: Source[];
  steps?: StatusStep[];
  startedAt?: number;
  endedAt?: number;
  done?: DoneEvent;
  /** What a reloaded answer kept: its route, triage, validation (unsupported claims) and steps ("node: label"). */
  stored?: {
    intent?: string | null;
    route_reason?: string | null;
    scope?: Scope | null;
    triage?: Triage | null;
    validation?: Validation | null;
    steps?: string[] | null;
  };
  error?: { message: string; code?: string };
  /** The connection was lost while it streamed and the page is re-attaching to its run (the server restarts). */
  reconnecting?: boolean;
  /** A stored answer that a server restart cut short (shown as stopped, with its own note). */
  interrupted?: boolean;
  /** What was sent, so a failed or stopped turn can be asked again (a reloaded one knows its question, not its
   * mode; guardrail "warn": sent again after a block). */
  request?: { message: string; mode?: Mode; guardrail?: GuardrailMode; keepScope?: boolean };
  /** The user already said of this blocked message "this was not an attack" and sent it again. */
  askedAnyway?: boolean;
}

/**
 * Whether a blocked answer offers "This was not an attack — ask anyway": the input guardrail blocked the message
 * as injection or jailbreak and the server allows an override (`can_override`), its question is known (sent in
 * this session, or the question before it in a reloaded thread), and it has not been sent anyway already.
 * Re-sending is allowed once, so a warn re-send never offers it.
 */
export function canAskAnyway(m: ChatMessage): boolean {
  const info = m.done ?? m.stored;
  return (
    m.role === "assistant" &&
    (m.state === "done" || m.state === "history") &&
    !m.askedAnyway &&
    m.request !== undefined &&
    m.request.guardrail !== "warn" &&
    info?.triage?.route === "blocked" &&
    info.validation?.input?.can_override === true
  );
}

/**
 * Fold one status event into the step list: `start` opens a step, `progress` relabels the open one of its node
 * ("Searching employee-handbook.md…"), `end` closes it.
 */
export function applyStatus(steps: StatusStep[], ev: StatusEvent, now: number): StatusStep[] {
  if (ev.phase === "start") {
    return [...steps, { node: ev.node, label: ev.label, detail: ev.detail, startedAt: now }];
  }
  const i = steps.findLastIndex((s) => s.node === ev.node && s.endedAt === undefined);
  if (ev.phase === "progress") {
    if (i === -1) return [...steps, { node: ev.node, label: ev.label, detail: ev.detail, startedAt: now }];
    const next = [...steps];
    next[i] = { ...next[i], label: ev.label };
    return next;
  }
  if (i === -1) return [...steps, { node: ev.node, label: ev.label, detail: ev.detail, startedAt: now, endedAt: now }];
  const next = [...steps];
  const firstWord = (label: string) => label.trim().split(/\s+/)[0]?.toLowerCase();
  const note = firstWord(ev.label) !== firstWord(next[i].label) ? ev.label : undefined;
  next[i] = { ...next[i], endedAt: now, detail: ev.detail ?? next[i].detail, ...(note ? { note } : {}) };
  return next;
}

/** Close every step still open: the turn ended, and when it was cut short (`cut`) those steps never finished. */
function closeSteps(steps: StatusStep[] | undefined, now: number, cut = false): StatusStep[] {
  return (steps ?? []).map((s) =>
    s.endedAt !== undefined ? s : { ...s, endedAt: now, ...(cut ? { unfinished: true } : {}) },
  );
}

/** Fold one stream event into the answer it belongs to (metadata is the conversation's business). */
export function applyChatEvent(m: ChatMessage, ev: ChatEvent, now: number): ChatMessage {
  switch (ev.event) {
    case "status":
      return { ...m, steps: applyStatus(m.steps ?? [], ev.data, now) };
    case "token":
      return { ...m, content: m.content + ev.data.text };
    case "replace":
      return { ...m, content: ev.data.text };
    case "sources":
      return { ...m, sources: ev.data.sources };
    case "done":
      // The final answer wins over the streamed tokens (validation may have redacted some).
      return {
        ...m,
        content: ev.data.answer || m.content,
        done: ev.data,
        state: "done",
        endedAt: now,
        steps: closeSteps(m.steps, now),
      };
    case "error":
      return { ...m, state: "error", endedAt: now, error: ev.data };
    case "stopped": {
      // The server stopped the run (or a restart interrupted it): the partial answer it kept is the text to show.
      const ended = { ...m, content: ev.data.answer, state: "stopped" as const, endedAt: now };
      return { ...ended, steps: closeSteps(m.steps, now, true), interrupted: ev.data.status === "interrupted" };
    }
    default:
      return m;
  }
}

/** End a turn that did not finish with `done`: stopped by the user, or failed with an error. */
export function endTurn(
  m: ChatMessage,
  state: "stopped" | "error",
  now: number,
  error?: { message: string; code?: string },
): ChatMessage {
  const ended = { ...m, state, endedAt: now, steps: closeSteps(m.steps, now, true), reconnecting: undefined };
  return error ? { ...ended, error } : ended;
}
