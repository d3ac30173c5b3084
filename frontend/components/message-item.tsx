"use client";
/** One message: the user's question, or an answer with its status, citations, sources and actions. */
import { useEffect, useState } from "react";
import type { ChatMessage } from "@/hooks/use-chat";
import { badgesFromDone } from "@/lib/badges";
import { canAskAnyway } from "@/lib/chat-turn";
import { sourceAnchor } from "@/lib/citations";
import { claimFor } from "@/lib/evidence";
import { AnswerBadges } from "./answer-badges";
import { CopyButton } from "./copy-button";
import { DocumentViewer, type ViewerTarget } from "./document-viewer";
import { MarkdownAnswer } from "./markdown-answer";
import { SourcesPanel } from "./sources-panel";
import { StatusTimeline } from "./status-timeline";
import { storedSteps } from "@/lib/turn-summary";

const WAIT = "Wait for the answer being written";

function errorTitle(code: string | undefined): string {
  switch (code) {
    case "backend_unreachable":
    case "network":
      return "Connection problem";
    case "model_unreachable":
      return "The model is unreachable";
    case "model_error":
      return "The model reported an error";
    case "too_long":
      return "This message is too long for the model";
    default:
      return "Something went wrong";
  }
}

export function MessageItem({
  message,
  onRetry,
  onAskAnyway,
  busy,
}: {
  message: ChatMessage;
  onRetry: (key: string) => void;
  onAskAnyway: (key: string) => void;
  /** Another answer is being written (or re-attached to): Retry and "ask anyway" wait for it, as they would end it. */
  busy: boolean;
}) {
  const [sourcesOpen, setSourcesOpen] = useState(false);
  const [highlighted, setHighlighted] = useState<string | null>(null);
  const [viewing, setViewing] = useState<ViewerTarget | null>(null);
  const streaming = message.state === "streaming";

  useEffect(() => {
    if (!sourcesOpen || !highlighted) return;
    const card = document.getElementById(sourceAnchor(message.key, highlighted));
    card?.scrollIntoView({ block: "nearest", behavior: "smooth" });
    // the document viewer, when a citation opened it, keeps the focus (its Close button): the card is behind it
    if (!viewing) card?.focus({ preventScroll: true });
  }, [sourcesOpen, highlighted, message.key, viewing]);

  if (message.role === "user") {
    return (
      <article className="message message-user" data-role="user">
        <div className="bubble">{message.content}</div>
      </article>
    );
  }

  const sources = message.sources ?? [];
  const info = message.done ?? message.stored;
  const unsupported = streaming ? undefined : info?.validation?.sources?.unsupported;
  /** A citation opens its document at the passage, for the sentence that marker ends (a source cited twice has
   * two); the sources panel opens on its card too. From the panel (no marker), the first sentence citing it. */
  const onCite = (id: string, marker?: HTMLElement) => {
    const source = sources.find((s) => s.id === id);
    if (!source) return;
    setSourcesOpen(true);
    setHighlighted(id);
    const same = marker?.closest(".answer")?.querySelectorAll(`button.cite-marker[data-cite="${id}"]`) ?? [];
    const nth = Math.max(0, Array.from(same).indexOf(marker as Element));
    setViewing({ source, claim: claimFor(message.content, id, nth) });
  };

  return (
    <article
      className="message message-assistant"
      data-role="assistant"
      data-state={message.state}
      aria-busy={streaming}
    >
      {message.state !== "error" && (
        <StatusTimeline
          steps={message.steps ?? storedSteps(message.stored?.steps)}
          running={streaming}
          content={message.content}
          sources={sources}
          triage={info?.triage}
          cut={message.state === "stopped" ? (message.interrupted ? "interrupted" : "stopped") : undefined}
          startedAt={message.startedAt}
          endedAt={message.endedAt}
          reconnecting={message.reconnecting}
        />
      )}
      {(message.content || streaming) && (
        <div className="answer" data-streaming={streaming || undefined}>
          <MarkdownAnswer text={message.content} sources={sources} onCite={onCite} unsupported={unsupported} />
          {streaming && <span className="caret" aria-hidden />}
        </div>
      )}
      {message.state === "stopped" && (
        <div className="turn-stopped-row">
          <p className="turn-note turn-stopped" role="note">
            {message.interrupted
              ? "Interrupted — the server restarted before this answer finished; this is what it had written."
              : "Stopped — this partial answer stays in the conversation, outside its memory and sources."}
          </p>
          {message.request && (
            <button
              type="button"
              className="tool-button"
              disabled={busy}
              title={busy ? WAIT : "Ask the same question again in this conversation"}
              onClick={() => onRetry(message.key)}
            >
              Retry
            </button>
          )}
        </div>
      )}
      {canAskAnyway(message) && (
        <div className="turn-note" role="note">
          <button
            type="button"
            className="tool-button"
            disabled={busy}
            title={busy ? WAIT : undefined}
            onClick={() => onAskAnyway(message.key)}
          >
            This was not an attack — ask anyway
          </button>
        </div>
      )}
      {message.state === "error" && message.error && (
        <div className="turn-error" role="alert">
          <p>
            <strong>{errorTitle(message.error.code)}</strong>
            {message.error.code ? <code className="error-code">{message.error.code}</code> : null}
          </p>
          <p className="error-message">{message.error.message}</p>
          {message.request && (
            <button
              type="button"
              className="button"
              disabled={busy}
              title={busy ? WAIT : undefined}
              onClick={() => onRetry(message.key)}
            >
              Retry
            </button>
          )}
        </div>
      )}
      {!streaming && message.content && (
        <div className="answer-tools">
          <CopyButton text={message.content} label="Copy answer" />
          {sources.length > 0 && (
            <button
              type="button"
              className="tool-button"
              aria-expanded={sourcesOpen}
              onClick={() => setSourcesOpen((o) => !o)}
            >
              {sourcesOpen ? "Hide sources" : `Sources (${sources.length})`}
            </button>
          )}
          <AnswerBadges badges={badgesFromDone(info)} />
        </div>
      )}
      {sourcesOpen && sources.length > 0 && (
        <SourcesPanel
          messageKey={message.key}
          answer={message.content}
          sources={sources}
          highlighted={highlighted}
          onShow={onCite}
        />
      )}
      {viewing && <DocumentViewer target={viewing} onClose={() => setViewing(null)} />}
    </article>
  );
}
