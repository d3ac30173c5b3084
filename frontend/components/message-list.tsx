"use client";
/** The conversation, kept scrolled to the newest text while the reader is at the bottom. */
import { useEffect, useRef } from "react";
import type { ChatMessage } from "@/hooks/use-chat";
import { MessageItem } from "./message-item";

export function MessageList({
  messages,
  onRetry,
  onAskAnyway,
  busy,
  empty,
}: {
  messages: ChatMessage[];
  onRetry: (key: string) => void;
  onAskAnyway: (key: string) => void;
  busy: boolean;
  empty: React.ReactNode;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);

  const onScroll = () => {
    const el = scroller.current;
    if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  };

  const last = messages[messages.length - 1];
  const count = useRef(0);
  useEffect(() => {
    // A new message (the user just sent, or a thread opened) brings the view back to the bottom.
    if (messages.length !== count.current) pinned.current = true;
    count.current = messages.length;
    const el = scroller.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [messages.length, last?.content, last?.steps?.length, last?.state]);

  return (
    <div className="messages" ref={scroller} onScroll={onScroll}>
      <div className="messages-inner">
        {messages.length === 0
          ? empty
          : messages.map((m) => (
              <MessageItem key={m.key} message={m} onRetry={onRetry} onAskAnyway={onAskAnyway} busy={busy} />
            ))}
      </div>
    </div>
  );
}
