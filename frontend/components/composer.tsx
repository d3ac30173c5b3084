"use client";
/**
 * The message box: Enter sends, Shift+Enter adds a line, Esc stops a running answer. Typing `@`
 * opens an autocomplete of documents (arrows, Enter/Tab to pick, Esc to close); mentions show as
 * chips, and mentions that match no document are flagged before sending. It takes the focus when
 * the conversation opens, except on a touch screen, where the keyboard would cover the conversation.
 */
import { useEffect, useId, useMemo, useRef, useState } from "react";
import {
  activeMention,
  classifyMentions,
  insertMention,
  LISTED,
  matchDocuments,
  optionMeta,
  removeMention,
} from "@/lib/mentions";
import type { DocumentRow } from "@/lib/types";

/**
 * A touch or pen screen (a pointer that cannot hover): focusing the box there opens a keyboard over the page. Not
 * "no hover" alone: a computer with no mouse at all (keyboard only, or a browser on a server) has no hover and no
 * pointer either, and there the box must take the focus (tester: typing went nowhere).
 */
const TOUCH_SCREEN = "(hover: none) and (pointer: coarse), (hover: none) and (pointer: fine)";

/** The message box's id: the page's "Skip to message box" link leads here. */
export const MESSAGE_BOX_ID = "message-box";

export function Composer({
  value,
  onChange,
  onSend,
  onStop,
  busy,
  documents,
  documentsAvailable,
  onMentionStart,
  maxChars = null,
  focusRequest = 0,
  scope = [],
  onLeaveScope,
}: {
  value: string;
  onChange: (value: string) => void;
  onSend: () => void;
  onStop: () => void;
  busy: boolean;
  documents: DocumentRow[];
  documentsAvailable: boolean;
  onMentionStart?: () => void;
  /** The server's limit on a message: over it the box says so and Send is off. */
  maxChars?: number | null;
  /** A new value (and the first one) asks for the focus: a conversation was opened. */
  focusRequest?: number;
  /** The documents a follow-up keeps searching (the last @-question's); shown with a way to search them all. */
  scope?: string[];
  onLeaveScope?: () => void;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const [caret, setCaret] = useState(0);
  const [dismissedAt, setDismissedAt] = useState<number | null>(null);
  const [active, setActive] = useState(0);
  const listId = useId();

  const length = useMemo(() => Array.from(value).length, [value]); // code points, as the server counts
  const tooLong = maxChars !== null && length > maxChars;
  const canSend = value.trim() !== "" && !tooLong;
  const ready = useMemo(() => documents.filter((d) => d.status === "ready"), [documents]);
  const mention = activeMention(value, caret);
  const matches = mention ? matchDocuments(ready, mention.query) : [];
  const options = matches.slice(0, LISTED);
  const more = matches.length - options.length; // not listed: typing narrows
  const open = mention !== null && dismissedAt !== mention.start && (options.length > 0 || mention.query === "");
  // The mention still being typed in the open list is not judged (or shown as a chip) until it is picked.
  const settled = open && mention ? value.slice(0, mention.start) + value.slice(caret) : value;
  const { known, ambiguous, unknown } = useMemo(
    () =>
      documentsAvailable
        ? classifyMentions(
            settled,
            ready.map((d) => d.name),
          )
        : { known: [], ambiguous: [], unknown: [] },
    [settled, ready, documentsAvailable],
  );

  const mentionStart = mention?.start;
  useEffect(() => {
    setActive(0);
    if (mentionStart !== undefined) onMentionStart?.();
  }, [mentionStart, onMentionStart]);

  useEffect(() => {
    if (!window.matchMedia(TOUCH_SCREEN).matches) area.current?.focus({ preventScroll: true });
  }, [focusRequest]);

  // Grow with the text up to a limit, so the layout does not jump line by line.
  useEffect(() => {
    const el = area.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
  }, [value]);

  const syncCaret = () => setCaret(area.current?.selectionStart ?? 0);

  const pick = (name: string) => {
    if (!mention) return;
    const next = insertMention(value, mention.start, caret, name);
    onChange(next.text);
    setCaret(next.caret);
    requestAnimationFrame(() => {
      area.current?.focus();
      area.current?.setSelectionRange(next.caret, next.caret);
    });
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLTextAreaElement>) => {
    if (open && options.length > 0) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const step = e.key === "ArrowDown" ? 1 : options.length - 1;
        setActive((a) => (a + step) % options.length);
        return;
      }
      if (e.key === "Enter" || e.key === "Tab") {
        e.preventDefault();
        pick(options[Math.min(active, options.length - 1)].name);
        return;
      }
    }
    if (open && e.key === "Escape") {
      e.preventDefault();
      setDismissedAt(mention!.start);
      return;
    }
    if (e.key === "Escape" && busy) {
      e.preventDefault();
      onStop();
      return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      if (!busy && canSend) onSend();
    }
  };

  const activeId = open && options.length > 0 ? `${listId}-opt-${Math.min(active, options.length - 1)}` : undefined;
  useEffect(() => {
    // the arrow keys move through a list that scrolls: keep the chosen one in view
    if (activeId) document.getElementById(activeId)?.scrollIntoView({ block: "nearest" });
  }, [activeId]);

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (busy) onStop();
        else if (canSend) onSend();
      }}
    >
      {(known.length > 0 || ambiguous.length > 0 || unknown.length > 0) && (
        <ul className="chips" aria-label="Mentioned documents">
          {known.map((k) => (
            <li key={k.name} className="chip" data-document={k.document}>
              <span>@{k.document}</span>
              <button
                type="button"
                aria-label={`Remove @${k.name}`}
                onClick={() => onChange(removeMention(value, k.name))}
              >
                ×
              </button>
            </li>
          ))}
          {ambiguous.map((a) => (
            <li key={a.name} className="chip chip-unknown" data-ambiguous={a.name} title={a.documents.join(", ")}>
              <span>
                @{a.name} — matches {a.documents.length} documents
              </span>
              <button
                type="button"
                aria-label={`Remove @${a.name}`}
                onClick={() => onChange(removeMention(value, a.name))}
              >
                ×
              </button>
            </li>
          ))}
          {unknown.map((name) => (
            <li key={name} className="chip chip-unknown" data-unknown={name} title="No document has this name">
              <span>@{name} — no such document</span>
              <button type="button" aria-label={`Remove @${name}`} onClick={() => onChange(removeMention(value, name))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {scope.length > 0 && known.length === 0 && ambiguous.length === 0 && (
        <p className="composer-scope" data-scope>
          <span>
            Follow-up questions search only <strong>{scope.join(", ")}</strong>.
          </span>
          {onLeaveScope && (
            <button type="button" className="composer-scope-leave" onClick={onLeaveScope}>
              Search all documents
            </button>
          )}
        </p>
      )}
      {tooLong && (
        <p className="composer-warning" role="alert" data-too-long>
          This message is {length.toLocaleString("en")} characters; the limit is {(maxChars ?? 0).toLocaleString("en")}.
          Shorten it to send.
        </p>
      )}
      {(unknown.length > 0 || ambiguous.length > 0) && (
        <p className="composer-warning" role="alert">
          {unknown.length > 0 &&
            `${unknown.map((n) => `@${n}`).join(", ")} ${unknown.length === 1 ? "matches" : "match"} no document. `}
          {ambiguous.map((a) => `@${a.name} could be ${a.documents.join(" or ")}. `)}
          Pick a document from the list after typing @, or send anyway.
        </p>
      )}
      <div className="composer-box">
        {open && (
          <ul className="mention-popup" id={listId} role="listbox" aria-label="Documents">
            {options.length === 0 ? (
              <li className="mention-empty" role="presentation">
                {documentsAvailable
                  ? "No documents yet — add some on the Documents page."
                  : "Document list unavailable."}
              </li>
            ) : (
              options.map((d, i) => (
                <li
                  key={d.id}
                  id={`${listId}-opt-${i}`}
                  role="option"
                  aria-selected={i === Math.min(active, options.length - 1)}
                  className="mention-option"
                  onMouseDown={(e) => {
                    e.preventDefault();
                    pick(d.name);
                  }}
                  onMouseEnter={() => setActive(i)}
                >
                  <span className="mention-name">{d.name}</span>
                  <span className="mention-meta">{optionMeta(d)}</span>
                </li>
              ))
            )}
            {more > 0 && (
              <li className="mention-empty mention-more" role="presentation" id={`${listId}-more`}>
                {more} more {more === 1 ? "document" : "documents"}: type more of the name to find{" "}
                {more === 1 ? "it" : "them"}
              </li>
            )}
          </ul>
        )}
        <textarea
          ref={area}
          id={MESSAGE_BOX_ID}
          className="composer-input"
          rows={1}
          value={value}
          placeholder="Ask about your documents — type @ to aim at one"
          aria-label="Message"
          role="combobox"
          aria-expanded={open}
          aria-controls={open ? listId : undefined}
          aria-autocomplete="list"
          aria-activedescendant={activeId}
          aria-describedby={open && more > 0 ? `${listId}-more` : undefined}
          onChange={(e) => {
            onChange(e.target.value);
            setCaret(e.target.selectionStart);
          }}
          onKeyDown={onKeyDown}
          onKeyUp={syncCaret}
          onClick={syncCaret}
          onSelect={syncCaret}
        />
        {busy ? (
          <button type="submit" className="button button-stop" aria-label="Stop (Esc)" title="Stop (Esc)">
            Stop
          </button>
        ) : (
          <button type="submit" className="button button-send" disabled={!canSend} title="Send (Enter)">
            Send
          </button>
        )}
      </div>
      <p className="composer-hint">
        Enter to send · Shift+Enter for a new line · Esc to stop · @ to mention a document
      </p>
    </form>
  );
}
