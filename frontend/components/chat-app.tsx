"use client";
/** The chat screen: threads sidebar, conversation, composer. The open thread lives in the URL (?thread=ID). */
import { useCallback, useEffect, useRef, useState } from "react";
import { useChat } from "@/hooks/use-chat";
import { useDocuments } from "@/hooks/use-documents";
import { useHealth } from "@/hooks/use-health";
import { useThreads } from "@/hooks/use-threads";
import { api } from "@/lib/api";
import { ApiError } from "@/lib/sse";
import { exportName, titleFrom } from "@/lib/titles";
import type { Mode } from "@/lib/types";
import { Composer, MESSAGE_BOX_ID } from "./composer";
import { MessageList } from "./message-list";
import { ModeSwitch } from "./mode-switch";
import { MenuIcon } from "./icons";
import { ThreadSidebar } from "./thread-sidebar";

const MODE_KEY = "ragline-mode";
const EXAMPLES = [
  "How much does a Zephyr-9 service cost?",
  "@employee-handbook what is the notice period?",
  "Which passwords does the IT security policy require?",
];

const threadFromUrl = () => new URLSearchParams(window.location.search).get("thread");

function setUrlThread(id: string | null, push: boolean) {
  const url = id ? `/?thread=${encodeURIComponent(id)}` : "/";
  if (url === window.location.pathname + window.location.search) return;
  window.history[push ? "pushState" : "replaceState"](null, "", url);
}

export function ChatApp() {
  const [draft, setDraft] = useState("");
  const [mode, setModeState] = useState<Mode>("auto");
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  /** Opening a conversation (this page, the sidebar, Back) puts the focus in the message box. */
  const [focusRequest, setFocusRequest] = useState(0);
  const threads = useThreads();
  const docs = useDocuments();
  const health = useHealth();

  const chat = useChat({
    onThreadId: (id, question) => {
      setUrlThread(id, false);
      if (question) threads.showNew(id, titleFrom(question));
    },
    onTurnEnd: () => {
      void threads.refresh();
      void health.check();
    },
    // Nothing typed is lost: a failed question goes back into an empty box.
    onFailure: (request) => setDraft((d) => (d.trim() ? d : request.message)),
  });
  const { openThread, stop, busy } = chat;
  const { refresh: refreshThreads, error: threadsError } = threads;

  useEffect(() => {
    if (health.ok && threadsError) void refreshThreads(); // the backend is back: the list comes back too
  }, [health.ok, threadsError, refreshThreads]);

  useEffect(() => {
    const stored = localStorage.getItem(MODE_KEY);
    if (stored === "auto" || stored === "rag" || stored === "chat") setModeState(stored);
    void openThread(threadFromUrl());
    const onPop = () => {
      void openThread(threadFromUrl());
      setFocusRequest((n) => n + 1);
    };
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, [openThread]);

  // Back to this tab: another tab may have asked on this thread since (an answer being written, or new turns),
  // renamed it, or deleted it. (a failed exchange is shown but was never stored: it does not count)
  const failed = chat.messages.filter((m) => m.role === "assistant" && m.state === "error").length;
  const shownTurns = chat.messages.length - 2 * failed;
  const shownThread = chat.threadId;
  useEffect(() => {
    if (busy) return;
    const onBack = () => {
      if (document.visibilityState !== "visible") return;
      void refreshThreads();
      if (!shownThread) return;
      api.thread(shownThread).then(
        (d) => {
          if (d.active_run || d.messages.length > shownTurns) void openThread(shownThread);
        },
        // deleted (it showed stored turns; a first exchange that failed was never stored): opening it says so and
        // leaves it, or the next question would bring it back under its id, below turns the server no longer holds
        (err: unknown) => {
          if (err instanceof ApiError && err.status === 404 && shownTurns > 0) void openThread(shownThread);
        },
      );
    };
    window.addEventListener("focus", onBack);
    document.addEventListener("visibilitychange", onBack);
    return () => {
      window.removeEventListener("focus", onBack);
      document.removeEventListener("visibilitychange", onBack);
    };
  }, [busy, shownThread, shownTurns, openThread, refreshThreads]);

  useEffect(() => {
    if (!busy) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !e.defaultPrevented) stop();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [busy, stop]);

  const setMode = (m: Mode) => {
    setModeState(m);
    localStorage.setItem(MODE_KEY, m);
  };

  const go = useCallback(
    (id: string | null) => {
      setUrlThread(id, true);
      setSidebarOpen(false);
      void openThread(id);
      setFocusRequest((n) => n + 1);
    },
    [openThread],
  );

  const send = () => {
    const text = draft.trim();
    if (!text || busy) return;
    setDraft("");
    if (!chat.threadId || chat.messages.length === 0) chat.setTitle(titleFrom(text));
    chat.send(text, mode);
  };

  const retry = (key: string) => {
    const message = chat.messages.find((m) => m.key === key);
    if (busy) return; // asking again would end the answer being written (or re-attached to) and leave it spinning
    if (message?.request && draft.trim() === message.request.message) setDraft("");
    chat.retry(key, mode);
  };

  const current = threads.threads.find((t) => t.thread_id === chat.threadId);
  const title = current?.title ?? chat.title ?? "New chat";

  return (
    <div className="app">
      {/* First in the tab order, shown once focused: past the sidebar's conversations to the box (tester: ~60 Tabs). */}
      <a
        className="skip-link"
        href={`#${MESSAGE_BOX_ID}`}
        onClick={(e) => {
          e.preventDefault(); // the focus moves; the URL, which holds the thread, stays
          document.getElementById(MESSAGE_BOX_ID)?.focus();
        }}
      >
        Skip to message box
      </a>
      <ThreadSidebar
        threads={threads.threads}
        currentId={chat.threadId}
        error={threads.error}
        open={sidebarOpen}
        onClose={() => {
          setSidebarOpen(false);
          menuButton.current?.focus(); // the focus was in the drawer, which is now off the screen
        }}
        onNew={() => go(null)}
        onOpen={go}
        onRename={async (id, t) => {
          await threads.rename(id, t);
          if (id === chat.threadId) chat.setTitle(t);
        }}
        onDelete={async (id) => {
          await threads.remove(id);
          if (id === chat.threadId) go(null);
        }}
        footer={
          <span className="health" data-ok={health.ok ?? undefined} title={health.detail ?? undefined}>
            {health.ok === false ? "backend offline" : health.label}
          </span>
        }
      />
      <main className="main">
        <header className="topbar">
          <button
            ref={menuButton}
            type="button"
            className="icon-button menu-button"
            aria-label="Conversations"
            aria-expanded={sidebarOpen}
            onClick={() => setSidebarOpen((o) => !o)}
          >
            <MenuIcon />
          </button>
          <h1 className="thread-heading">{title}</h1>
          {chat.threadId && chat.messages.length > 0 && (
            <a
              className="tool-button"
              href={`/api/threads/${encodeURIComponent(chat.threadId)}/export?format=markdown`}
              download={exportName(title)}
              title="Download this conversation as Markdown, with each answer's sources and steps"
            >
              Export
            </a>
          )}
          <ModeSwitch mode={mode} onChange={setMode} />
        </header>
        {health.ok === false && (
          <div className="banner" role="alert">
            {health.detail}{" "}
            <button type="button" className="tool-button" onClick={() => void health.check()}>
              Check again
            </button>
          </div>
        )}
        {chat.notice && (
          <div className="banner banner-info" role="status">
            {chat.notice}
          </div>
        )}
        <MessageList
          messages={chat.messages}
          onRetry={retry}
          onAskAnyway={(key) => !busy && chat.askAnyway(key, mode)}
          busy={busy}
          empty={
            chat.loading ? (
              <p className="empty">Loading conversation…</p>
            ) : (
              <div className="empty">
                <h2>Ask your documents</h2>
                <p>Answers cite their sources. Type @ to aim a question at one document.</p>
                <ul className="examples">
                  {EXAMPLES.map((q) => (
                    <li key={q}>
                      <button type="button" className="example" onClick={() => setDraft(q)}>
                        {q}
                      </button>
                    </li>
                  ))}
                </ul>
              </div>
            )
          }
        />
        <Composer
          value={draft}
          onChange={setDraft}
          onSend={send}
          onStop={stop}
          busy={busy}
          documents={docs.documents}
          documentsAvailable={docs.available && docs.loaded}
          onMentionStart={docs.refresh}
          maxChars={health.maxChars}
          focusRequest={focusRequest}
          scope={chat.scope}
          onLeaveScope={chat.leaveScope}
        />
      </main>
    </div>
  );
}
