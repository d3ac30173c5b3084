"use client";
/** Threads, newest first: open, rename inline, delete with confirmation; links to documents and the theme. */
import Link from "next/link";
import { useEffect, useId, useRef, useState } from "react";
import { useHideApi } from "@/hooks/use-hide-api";
import { useRovingFocus } from "@/hooks/use-roving-focus";
import { ApiError } from "@/lib/sse";
import type { ThreadSummary } from "@/lib/types";
import { AccountFoot, AccountLinks } from "./auth-gate";
import { PencilIcon, TrashIcon } from "./icons";
import { ThemeToggle } from "./theme-toggle";

function relativeTime(iso: string): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const s = Math.round((Date.now() - then) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(then).toLocaleDateString();
}

function ThreadRow({
  thread,
  current,
  tabStop,
  hintId,
  onOpen,
  onRename,
  onDelete,
}: {
  thread: ThreadSummary;
  current: boolean;
  /** The list's one tab stop is this row's link; its other controls, and other rows', are reached by arrow keys. */
  tabStop: boolean;
  /** The hidden sentence saying which keys move in the list. */
  hintId: string;
  onOpen: (id: string) => void;
  onRename: (id: string, title: string) => Promise<void>;
  onDelete: (id: string) => Promise<void>;
}) {
  const [mode, setMode] = useState<"view" | "rename" | "confirm">("view");
  const [draft, setDraft] = useState(thread.title);
  const [error, setError] = useState<string | null>(null);
  // A rename refused while an answer is being written (409) is applied when the thread next changes: its answer
  // ended and the list was read again. The message and the open box used to stay after the answer (tester).
  const pending = useRef(false);
  const saving = useRef(false); // one request at a time: the list may be read again while one is on its way
  const dropped = useRef(false); // Escape: no later blur or retry renames it
  const seen = useRef(thread.updated_at);
  const link = useRef<HTMLAnchorElement>(null);
  const refocus = useRef(false); // a rename or delete ended (Enter, Escape, Cancel): the focus goes back to the link

  const backToLink = () => {
    refocus.current = true;
    setMode("view");
  };
  useEffect(() => {
    if (mode !== "view" || !refocus.current) return;
    refocus.current = false;
    link.current?.focus();
  }, [mode]);

  const save = async () => {
    const title = draft.trim();
    if (dropped.current) return;
    if (!title || title === thread.title) return setMode("view");
    if (saving.current) return;
    saving.current = true;
    try {
      await onRename(thread.thread_id, title);
      pending.current = false;
      setMode("view");
      setError(null);
    } catch (err) {
      refocus.current = false; // the box stays open; a rename applied later must not take the focus from elsewhere
      pending.current = err instanceof ApiError && err.status === 409;
      setError(busyMessage(err, "renamed"));
    } finally {
      saving.current = false;
    }
  };

  /** Escape: the rename is dropped, a refused one too (it is not applied when the answer ends). */
  const cancel = () => {
    dropped.current = true;
    pending.current = false;
    setError(null);
    setDraft(thread.title);
    backToLink();
  };

  useEffect(() => {
    if (thread.updated_at === seen.current) return;
    seen.current = thread.updated_at;
    if (pending.current) void save();
  });

  return (
    <li
      className="thread"
      data-thread={thread.thread_id}
      data-roving-row={thread.thread_id}
      aria-current={current ? "page" : undefined}
    >
      {mode === "rename" ? (
        <input
          className="thread-rename"
          aria-label="New title"
          value={draft}
          autoFocus
          maxLength={200}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              refocus.current = true;
              void save();
            }
            if (e.key === "Escape") {
              e.preventDefault(); // the rename's Escape, not the page's: the answer being written goes on
              cancel();
            }
          }}
          onBlur={() => void save()}
        />
      ) : (
        <a
          ref={link}
          className="thread-link"
          href={`/?thread=${encodeURIComponent(thread.thread_id)}`}
          data-roving-cell
          tabIndex={tabStop ? 0 : -1}
          aria-describedby={hintId}
          onClick={(e) => {
            if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
            e.preventDefault();
            onOpen(thread.thread_id);
          }}
        >
          <span className="thread-title" title={thread.title}>
            {thread.title}
          </span>
          <span className="thread-time">
            {relativeTime(thread.updated_at)}
            {thread.via_api && (
              <span className="thread-origin" title="Asked through the OpenAI-compatible API, e.g. from Open WebUI">
                API
              </span>
            )}
          </span>
        </a>
      )}
      {mode === "confirm" ? (
        <div className="thread-confirm" role="group" aria-label="Confirm delete">
          <span>Delete?</span>
          <button
            type="button"
            className="tool-button danger"
            autoFocus
            onClick={() => onDelete(thread.thread_id).catch((err) => setError(busyMessage(err, "deleted")))}
          >
            Delete
          </button>
          <button type="button" className="tool-button" onClick={() => backToLink()}>
            Cancel
          </button>
        </div>
      ) : (
        mode === "view" && (
          <div className="thread-actions">
            <button
              type="button"
              className="icon-button"
              data-roving-cell
              tabIndex={-1}
              aria-label={`Rename “${thread.title}”`}
              title="Rename"
              onClick={() => {
                dropped.current = false;
                setDraft(thread.title);
                setMode("rename");
              }}
            >
              <PencilIcon />
            </button>
            <button
              type="button"
              className="icon-button"
              data-roving-cell
              tabIndex={-1}
              aria-label={`Delete “${thread.title}”`}
              title="Delete"
              onClick={() => setMode("confirm")}
            >
              <TrashIcon />
            </button>
          </div>
        )
      )}
      {error && <p className="thread-error">{error}</p>}
    </li>
  );
}

export function ThreadSidebar({
  threads,
  currentId,
  error,
  open,
  onClose,
  onNew,
  onOpen,
  onRename,
  onDelete,
  footer,
}: {
  threads: ThreadSummary[];
  currentId: string | null;
  error: string | null;
  open: boolean;
  onClose: () => void;
  onNew: () => void;
  onOpen: (id: string) => void;
  onRename: (id: string, title: string) => Promise<void>;
  onDelete: (id: string) => Promise<void>;
  footer?: React.ReactNode;
}) {
  const [hideApi, setHideApi] = useHideApi();
  const fromApi = threads.filter((t) => t.via_api).length;
  // the open conversation stays listed even when hidden ones are
  const shown = hideApi ? threads.filter((t) => !t.via_api || t.thread_id === currentId) : threads;
  // One tab stop for the whole list (tester: three a conversation, about 60 to get past 20 of them).
  const roving = useRovingFocus(
    shown.map((t) => t.thread_id),
    currentId,
  );
  const hintId = useId();
  const newButton = useRef<HTMLButtonElement>(null);
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    // The phone's drawer: the keyboard goes into it, and Escape closes it (before the page's Escape stops an answer).
    if (!open) return;
    newButton.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented) return;
      e.preventDefault();
      close.current();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open]);
  return (
    <>
      <aside className="sidebar" data-open={open || undefined} aria-label="Conversations">
        <div className="sidebar-head">
          <Link href="/" className="brand" onClick={(e) => (e.preventDefault(), onNew())}>
            Ragline
          </Link>
          <button ref={newButton} type="button" className="button button-new" onClick={onNew}>
            + New chat
          </button>
        </div>
        <nav className="threads" aria-label="Threads">
          {error && (
            <p className="sidebar-error" title={error}>
              Conversations are unavailable while the backend is unreachable.
            </p>
          )}
          {threads.length === 0 && !error && <p className="sidebar-empty">No conversations yet.</p>}
          {fromApi > 0 && (
            <label className="threads-filter">
              <input type="checkbox" checked={hideApi} onChange={(e) => setHideApi(e.target.checked)} />
              Hide API conversations ({fromApi})
            </label>
          )}
          <p id={hintId} className="visually-hidden">
            Up and down arrows move between conversations; the right arrow reaches Rename and Delete.
          </p>
          <ul onFocus={roving.onFocus} onKeyDown={roving.onKeyDown}>
            {shown.map((t) => (
              <ThreadRow
                key={t.thread_id}
                thread={t}
                current={t.thread_id === currentId}
                tabStop={t.thread_id === roving.tabStop}
                hintId={hintId}
                onOpen={onOpen}
                onRename={onRename}
                onDelete={onDelete}
              />
            ))}
          </ul>
        </nav>
        <div className="sidebar-foot">
          <Link href="/documents" className="nav-link">
            Documents
          </Link>
          <AccountLinks />
          <ThemeToggle />
          <AccountFoot />
          {footer}
        </div>
      </aside>
      {open && <div className="scrim" onClick={onClose} aria-hidden />}
    </>
  );
}

/** A refusal as the reader should read it: a 409 means an answer is still being written in the conversation. */
function busyMessage(err: unknown, what: "renamed" | "deleted"): string {
  if (err instanceof ApiError && err.status === 409 && what === "renamed") {
    return "An answer is still being written in this conversation; the new title is applied once it ends.";
  }
  if (err instanceof ApiError && err.status === 409) {
    return `An answer is still being written in this conversation; it can be ${what} once it ends (or after Stop).`;
  }
  return err instanceof Error ? err.message : String(err);
}
