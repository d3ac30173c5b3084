"use client";
/** One conversation: sending a turn over SSE, stopping it, retrying it, and loading a thread's history. */
import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "@/lib/api";
import { ApiError, streamChat } from "@/lib/sse";
import { type ChatMessage, applyChatEvent, endTurn } from "@/lib/chat-turn";
import type { Mode } from "@/lib/types";

export type { ChatMessage, StatusStep, TurnState } from "@/lib/chat-turn";

let counter = 0;
const newKey = (role: string) => `${role[0]}${Date.now().toString(36)}${(counter++).toString(36)}`;

function describeFailure(err: unknown): { message: string; code?: string } {
  if (err instanceof ApiError) {
    if (err.status === 502 || err.status === 503 || err.status === 504) {
      return { message: err.message, code: "backend_unreachable" };
    }
    return { message: err.message, code: `http_${err.status}` };
  }
  return {
    message: "The connection to the server was lost before the answer finished. Check that Ragline is running.",
    code: "network",
  };
}

export interface UseChat {
  messages: ChatMessage[];
  threadId: string | null;
  title: string | null;
  busy: boolean;
  loading: boolean;
  notice: string | null;
  send: (message: string, mode: Mode) => void;
  stop: () => void;
  retry: (assistantKey: string) => void;
  openThread: (id: string | null) => Promise<void>;
  setTitle: (title: string | null) => void;
}

export function useChat(options: {
  onThreadId?: (id: string) => void;
  onTurnEnd?: (ok: boolean) => void;
  onFailure?: (request: { message: string; mode: Mode }) => void;
}): UseChat {
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [threadId, setThreadId] = useState<string | null>(null);
  const [title, setTitle] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [loading, setLoading] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const controller = useRef<AbortController | null>(null);
  const threadRef = useRef<string | null>(null);
  const opts = useRef(options);
  opts.current = options;

  const update = useCallback((key: string, change: (m: ChatMessage) => ChatMessage) => {
    setMessages((all) => all.map((m) => (m.key === key ? change(m) : m)));
  }, []);

  const run = useCallback(
    async (request: { message: string; mode: Mode }) => {
      controller.current?.abort();
      const abort = new AbortController();
      controller.current = abort;
      const key = newKey("assistant");
      const startedAt = Date.now();
      setNotice(null);
      setBusy(true);
      setMessages((all) => [
        ...all,
        { key: newKey("user"), role: "user", content: request.message, state: "done" },
        { key, role: "assistant", content: "", state: "streaming", steps: [], startedAt, request },
      ]);
      let finished = false;
      try {
        for await (const ev of streamChat(
          { message: request.message, thread_id: threadRef.current, mode: request.mode, on_disconnect: "cancel" },
          abort.signal,
        )) {
          if (ev.event === "metadata") {
            if (threadRef.current !== ev.data.thread_id) {
              threadRef.current = ev.data.thread_id;
              setThreadId(ev.data.thread_id);
              opts.current.onThreadId?.(ev.data.thread_id);
            }
            continue;
          }
          const now = Date.now();
          update(key, (m) => applyChatEvent(m, ev, now));
          if (ev.event === "done" || ev.event === "error" || ev.event === "stopped") finished = true;
          if (ev.event === "error") opts.current.onFailure?.(request);
        }
        if (!finished) {
          const error = { message: "The stream ended before the answer finished (network drop?).", code: "network" };
          update(key, (m) => endTurn(m, "error", Date.now(), error));
          opts.current.onFailure?.(request);
        }
      } catch (err) {
        const now = Date.now();
        if (abort.signal.aborted) {
          update(key, (m) => endTurn(m, "stopped", now));
        } else {
          update(key, (m) => endTurn(m, "error", now, describeFailure(err)));
          opts.current.onFailure?.(request);
        }
      } finally {
        if (controller.current === abort) {
          controller.current = null;
          setBusy(false);
        }
        opts.current.onTurnEnd?.(finished);
      }
    },
    [update],
  );

  const send = useCallback((message: string, mode: Mode) => void run({ message, mode }), [run]);

  const stop = useCallback(() => controller.current?.abort(), []);

  const retry = useCallback(
    (assistantKey: string) => {
      let request: ChatMessage["request"];
      setMessages((all) => {
        const i = all.findIndex((m) => m.key === assistantKey);
        if (i === -1) return all;
        request = all[i].request;
        // Drop the failed exchange: it was never stored, and the retry re-adds it.
        return all.filter((_, j) => j !== i && !(j === i - 1 && all[j].role === "user"));
      });
      queueMicrotask(() => request && void run(request));
    },
    [run],
  );

  const openThread = useCallback(async (id: string | null) => {
    controller.current?.abort();
    threadRef.current = id;
    setThreadId(id);
    setNotice(null);
    setMessages([]);
    setTitle(null);
    if (!id) return;
    setLoading(true);
    try {
      const detail = await api.thread(id);
      if (threadRef.current !== id) return;
      setTitle(detail.title);
      setMessages(
        detail.messages.map((m, i) => ({
          key: `h${i}-${id}`,
          role: m.role,
          content: m.content,
          sources: m.sources ?? undefined,
          stored: { intent: m.intent, triage: m.triage, validation: m.validation },
          state: "history",
        })),
      );
    } catch (err) {
      if (threadRef.current !== id) return;
      setNotice(
        err instanceof ApiError && err.status === 404
          ? "This conversation does not exist (it may have been deleted, or its first answer never finished). Ask something to start it."
          : `Could not load this conversation: ${err instanceof Error ? err.message : String(err)}`,
      );
    } finally {
      if (threadRef.current === id) setLoading(false);
    }
  }, []);

  useEffect(() => () => controller.current?.abort(), []);

  return { messages, threadId, title, busy, loading, notice, send, stop, retry, openThread, setTitle };
}
