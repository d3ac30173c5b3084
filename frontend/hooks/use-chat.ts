"use client";
/** One conversation: sending a turn over SSE, stopping it, retrying it, and loading a thread's history. */
import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "@/lib/api";
import { StreamEndedError, followAcrossRestarts } from "@/lib/reattach";
import { ApiError, type NumberedChatEvent, followRun, streamChat } from "@/lib/sse";
import { MISSING_THREAD, afterLoadFailure, askedOnMissingThread, stopLeftToPage } from "@/lib/chat-failures";
import { type ChatMessage, applyChatEvent, endTurn } from "@/lib/chat-turn";
import { historyMessages } from "@/lib/thread-history";
import type { GuardrailMode, Mode } from "@/lib/types";

export type { ChatMessage, StatusStep, TurnState } from "@/lib/chat-turn";

/** keepScope false: the user left the thread's @-scope, so this follow-up searches every document. */
type Request = { message: string; mode: Mode; guardrail?: GuardrailMode; keepScope?: boolean };
/** A turn that ended without its whole answer: stopped, or interrupted by a restart (kept in the thread). */
const unfinished = (m: ChatMessage) => m.role === "assistant" && m.state === "stopped";

let counter = 0;
const newKey = (role: string) => `${role[0]}${Date.now().toString(36)}${(counter++).toString(36)}`;

function describeFailure(err: unknown): { message: string; code?: string } {
  if (err instanceof StreamEndedError) return { message: err.message, code: "network" };
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
  /** The documents a follow-up keeps searching: those the thread's last @-question was aimed at ([] for none). */
  scope: string[];
  /** Search every document from the next question on: the thread's scope ends with it. */
  leaveScope: () => void;
  send: (message: string, mode: Mode) => void;
  stop: () => void;
  /** Ask a failed turn's question again in its place, or a stopped one's as a new turn (its partial answer stays). */
  retry: (assistantKey: string, mode: Mode) => void;
  askAnyway: (assistantKey: string, mode: Mode) => void;
  openThread: (id: string | null) => Promise<void>;
  setTitle: (title: string | null) => void;
}

export function useChat(options: {
  /** The run's thread is known (its first event); `question` when this page asked it. */
  onThreadId?: (id: string, question?: string) => void;
  onTurnEnd?: (ok: boolean) => void;
  onFailure?: (request: { message: string; mode: Mode }) => void;
}): UseChat {
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [threadId, setThreadId] = useState<string | null>(null);
  const [title, setTitle] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [loading, setLoading] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [scope, setScope] = useState<string[]>([]);
  const keepScope = useRef(true);
  const controller = useRef<AbortController | null>(null);
  const runRef = useRef<{ id: string; lastId: number } | null>(null);
  const stopWanted = useRef(false);
  /** The connection is lost and the page is re-attaching: Stop cannot reach the server, so it ends the turn here. */
  const reconnecting = useRef(false);
  const threadRef = useRef<string | null>(null);
  const opts = useRef(options);
  opts.current = options;

  const update = useCallback((key: string, change: (m: ChatMessage) => ChatMessage) => {
    setMessages((all) => all.map((m) => (m.key === key ? change(m) : m)));
  }, []);

  /** Show a fresh conversation: no thread yet, so the next question starts one under a new id. */
  const clear = useCallback((notice: string | null) => {
    threadRef.current = null;
    setThreadId(null);
    setNotice(notice);
    setMessages([]);
    setTitle(null);
    setScope([]);
    setLoading(false);
    keepScope.current = true;
  }, []);

  /** Read a run's events into the answer `key`; a stream that ends early re-attaches, across a server restart too. */
  const consume = useCallback(
    async (
      key: string,
      open: (signal: AbortSignal) => AsyncGenerator<NumberedChatEvent>,
      request?: Request,
      known?: { id: string; lastId: number },
    ) => {
      controller.current?.abort();
      const abort = new AbortController();
      controller.current = abort;
      stopWanted.current = false;
      reconnecting.current = false;
      setBusy(true);
      let finished = false;
      let started = false;
      const onReconnecting = (on: boolean) => {
        reconnecting.current = on;
        update(key, (m) => ({ ...m, reconnecting: on || undefined }));
      };
      const events = followAcrossRestarts(open(abort.signal), { signal: abort.signal, run: known, onReconnecting });
      try {
        for await (const ev of events) {
          started = true;
          if (ev.id !== undefined && runRef.current) runRef.current.lastId = ev.id;
          if (ev.event === "metadata") {
            runRef.current = { id: ev.data.run_id, lastId: ev.id ?? 0 };
            if (stopWanted.current) void api.cancelRun(ev.data.run_id).catch(() => undefined);
            if (threadRef.current !== ev.data.thread_id) {
              threadRef.current = ev.data.thread_id;
              setThreadId(ev.data.thread_id);
              opts.current.onThreadId?.(ev.data.thread_id, request?.message);
            }
            continue;
          }
          const now = Date.now();
          update(key, (m) => applyChatEvent(m, ev, now));
          // a documents turn sets the thread's scope to what it searched (its memory does the same)
          if (ev.event === "done" && ev.data.intent === "rag") setScope(ev.data.scope?.documents ?? []);
          if (ev.event === "done" || ev.event === "error" || ev.event === "stopped") finished = true;
          if (ev.event === "error" && request) opts.current.onFailure?.(request);
        }
      } catch (err) {
        if (abort.signal.aborted) {
          // Stop while the server did not answer: the turn ends here, its partial text kept
          if (stopWanted.current) update(key, (m) => endTurn(m, "stopped", Date.now()));
        } else {
          // The thread is not this user's (asked while its 404 was loading): no Retry could work, so leave it.
          if (request && askedOnMissingThread(err, started)) clear(MISSING_THREAD);
          else update(key, (m) => endTurn(m, "error", Date.now(), describeFailure(err)));
          if (request) opts.current.onFailure?.(request);
        }
      } finally {
        if (controller.current === abort) {
          controller.current = null;
          runRef.current = null;
          reconnecting.current = false;
          setBusy(false);
        }
        opts.current.onTurnEnd?.(finished);
      }
    },
    [update, clear],
  );

  const run = useCallback(
    async (request: Request) => {
      const key = newKey("assistant");
      setNotice(null);
      runRef.current = null;
      setMessages((all) => [
        ...all,
        { key: newKey("user"), role: "user", content: request.message, state: "done" },
        { key, role: "assistant", content: "", state: "streaming", steps: [], startedAt: Date.now(), request },
      ]);
      const body = {
        message: request.message,
        thread_id: threadRef.current,
        mode: request.mode,
        ...(request.guardrail ? { guardrail: request.guardrail } : {}),
        ...(request.keepScope === false ? { keep_scope: false } : {}),
      };
      await consume(key, (signal) => streamChat(body, signal), request);
    },
    [consume],
  );

  const send = useCallback(
    (message: string, mode: Mode) => {
      const keep = keepScope.current;
      keepScope.current = true; // once: the server ends the scope with this question
      void run({ message, mode, ...(keep ? {} : { keepScope: false }) });
    },
    [run],
  );

  const leaveScope = useCallback(() => {
    keepScope.current = false;
    setScope([]);
  }, []);

  /**
   * Stop on the server: the run ends with a `stopped` event, which ends the stream. While re-attaching, or when the
   * server cannot be told, the page stops following and ends the turn as stopped itself; a run that ended meanwhile
   * (409) ends as it did.
   */
  const stop = useCallback(() => {
    const following = controller.current;
    if (!following) return;
    stopWanted.current = true; // before its id is known: cancelled as soon as it is
    const run = runRef.current;
    if (!run) return;
    if (reconnecting.current) following.abort();
    api.cancelRun(run.id).catch((err) => stopLeftToPage(err) && following.abort());
  }, []);

  const retry = useCallback(
    (assistantKey: string, mode: Mode) => {
      let request: ChatMessage["request"];
      setMessages((all) => {
        const i = all.findIndex((m) => m.key === assistantKey);
        if (i === -1) return all;
        request = all[i].request;
        // A stopped answer is stored in the thread and stays; a failed exchange was never stored: the retry re-adds it.
        // A stopped answer stays, without its Retry now: the new turn has its own.
        if (unfinished(all[i])) return all.map((m, j) => (j === i ? { ...m, request: undefined } : m));
        return all.filter((_, j) => j !== i && !(j === i - 1 && all[j].role === "user"));
      });
      queueMicrotask(
        () =>
          request && void run({ message: request.message, mode: request.mode ?? mode, keepScope: request.keepScope }),
      );
    },
    [run],
  );

  /** "This was not an attack": send a blocked message once more, with the input guardrail only warning (in its own
   * mode, or `mode` for a reloaded one, whose mode is not stored). */
  const askAnyway = useCallback(
    (assistantKey: string, mode: Mode) => {
      let request: ChatMessage["request"];
      setMessages((all) =>
        all.map((m) => {
          if (m.key !== assistantKey) return m;
          request = m.request;
          return { ...m, askedAnyway: true };
        }),
      );
      queueMicrotask(
        () =>
          request &&
          void run({
            message: request.message,
            mode: request.mode ?? mode,
            guardrail: "warn",
            keepScope: request.keepScope,
          }),
      );
    },
    [run],
  );

  const openThread = useCallback(
    async (id: string | null) => {
      controller.current?.abort();
      clear(null);
      threadRef.current = id;
      setThreadId(id);
      if (!id) return;
      setLoading(true);
      try {
        const detail = await api.thread(id);
        if (threadRef.current !== id) return;
        setTitle(detail.title);
        setScope(detail.scope ?? []);
        const history = historyMessages(detail, id);
        const active = detail.active_run;
        if (!active) {
          setMessages(history);
          return;
        }
        // An answer is being written on the server: show it from its first event and follow it live.
        const key = newKey("assistant");
        setMessages([
          ...history,
          { key: newKey("user"), role: "user", content: active.question, state: "done" },
          {
            key,
            role: "assistant",
            content: "",
            state: "streaming",
            steps: [],
            startedAt: Date.parse(active.created_at),
          },
        ]);
        setLoading(false);
        runRef.current = { id: active.run_id, lastId: 0 };
        void consume(key, (signal) => followRun(active.run_id, 0, signal), undefined, { id: active.run_id, lastId: 0 });
      } catch (err) {
        if (threadRef.current !== id) return;
        const { notice, threadId: next } = afterLoadFailure(id, err);
        if (next === null)
          clear(notice); // another user's thread, say: asking on its id would be refused
        else setNotice(notice);
      } finally {
        if (threadRef.current === id) setLoading(false);
      }
    },
    [consume, clear],
  );

  useEffect(() => () => controller.current?.abort(), []);

  return {
    messages,
    threadId,
    title,
    busy,
    loading,
    notice,
    scope,
    leaveScope,
    send,
    stop,
    retry,
    askAnyway,
    openThread,
    setTitle,
  };
}
