"use client";
/**
 * An answer as sanitized Markdown: react-markdown never renders raw HTML (it is dropped) and strips
 * unsafe URLs (javascript:, data:); code blocks are highlighted; `[S1]` markers become citations; the spans
 * the source check found unsupported are underlined.
 */
import { memo, type ReactNode } from "react";
import ReactMarkdown, { defaultUrlTransform, type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import { CITE_PREFIX, remarkCitations } from "@/lib/remark-citations";
import { remarkUnsupported, type Span } from "@/lib/remark-unsupported";
import type { Source } from "@/lib/types";
import { CitationMarker } from "./citation-marker";

const rehypePlugins = [[rehypeHighlight, { detect: false, ignoreMissing: true }]] as never;

function MarkdownAnswerInner({
  text,
  sources,
  onCite,
  unsupported,
}: {
  text: string;
  sources?: Source[];
  onCite?: (id: string, marker: HTMLElement) => void;
  unsupported?: Span[];
}) {
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

export const MarkdownAnswer = memo(MarkdownAnswerInner);
