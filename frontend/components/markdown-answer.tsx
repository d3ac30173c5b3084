"use client";
/**
 * An answer as sanitized Markdown: react-markdown never renders raw HTML (it is dropped) and strips
 * unsafe URLs (javascript:, data:); code blocks are highlighted; `[S1]` markers become citations; the spans
 * the source check found unsupported are underlined. The closing paragraphs of Ragline's checks (lib/check-notes.ts)
 * follow the model's words in a note of their own, with the same citations and underlines.
 */
import { memo, type ReactNode } from "react";
import ReactMarkdown, { defaultUrlTransform, type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import { CHECK_NOTE_LABEL, CHECK_NOTE_NAME, splitCheckNotes } from "@/lib/check-notes";
import { CITE_PREFIX, remarkCitations } from "@/lib/remark-citations";
import { remarkUnsupported, type Span } from "@/lib/remark-unsupported";
import type { Source } from "@/lib/types";
import { CitationMarker } from "./citation-marker";

const rehypePlugins = [[rehypeHighlight, { detect: false, ignoreMissing: true }]] as never;

interface AnswerProps {
  text: string;
  sources?: Source[];
  onCite?: (id: string, marker: HTMLElement) => void;
  /** Character spans in `text`. */
  unsupported?: Span[];
}

function Markdown({ text, sources, onCite, unsupported }: AnswerProps) {
  const remarkPlugins = [remarkGfm, [remarkUnsupported, { spans: unsupported }], remarkCitations] as never;
  const components: Components = {
    a({ href, children }) {
      if (href?.startsWith(CITE_PREFIX)) {
        const id = href.slice(CITE_PREFIX.length);
        return <CitationMarker id={id} source={sources?.find((s) => s.id === id)} onCite={onCite} />;
      }
      return (
        <a href={href} target="_blank" rel="noopener noreferrer nofollow">
          {children as ReactNode}
        </a>
      );
    },
  };
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={remarkPlugins}
        rehypePlugins={rehypePlugins}
        components={components}
        skipHtml
        urlTransform={(url) => (url.startsWith(CITE_PREFIX) ? url : defaultUrlTransform(url))}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}

/** The whole answer: `unsupported` spans are in its full text, notes included. */
function MarkdownAnswerInner({ text, sources, onCite, unsupported }: AnswerProps) {
  const { body, notes, notesAt } = splitCheckNotes(text);
  // the body is a prefix of the answer, so its spans hold as they are; the notes' are moved to their own text
  const noteSpans = unsupported
    ?.filter((s) => s.end > notesAt)
    .map((s) => ({ start: Math.max(0, s.start - notesAt), end: s.end - notesAt }));
  return (
    <>
      <Markdown text={body} sources={sources} onCite={onCite} unsupported={unsupported} />
      {notes.length > 0 && (
        <aside className="check-note" role="note" aria-label={CHECK_NOTE_NAME}>
          <span className="check-note-label" aria-hidden>
            {CHECK_NOTE_LABEL}
          </span>
          <Markdown text={text.slice(notesAt)} sources={sources} onCite={onCite} unsupported={noteSpans} />
        </aside>
      )}
    </>
  );
}

export const MarkdownAnswer = memo(MarkdownAnswerInner);
