"use client";
/** The sources of one answer: document, page, snippet and relevance, cited ones first. (The ranking score, a rank
 * fusion's 0.03 when no reranker is installed, read as "barely relevant" to a tester: it is not shown.) */
import { orderSources, sourceAnchor } from "@/lib/citations";
import type { Source } from "@/lib/types";

export function SourcesPanel({
  messageKey,
  answer,
  sources,
  highlighted,
  onShow,
}: {
  messageKey: string;
  answer: string;
  sources: Source[];
  highlighted: string | null;
  /** Open the document at this source's passage. */
  onShow?: (id: string) => void;
}) {
  return (
    <section className="sources" aria-label="Sources">
      <ol className="source-list">
        {orderSources(answer, sources).map(({ source, cited }) => (
          <li
            key={source.id}
            id={sourceAnchor(messageKey, source.id)}
            className="source-card"
            data-source={source.id}
            data-highlighted={highlighted === source.id || undefined}
            data-cited={cited || undefined}
            tabIndex={-1}
          >
            <div className="source-head">
              <span className="source-id">{source.id}</span>
              <span className="source-doc">{source.document}</span>
              {source.page != null && <span className="source-meta">page {source.page}</span>}
              {source.section && <span className="source-meta source-section">{source.section}</span>}
              <span className="source-meta">chunk {source.chunk}</span>
              {source.relevance != null && (
                <span
                  className="source-score"
                  title="How close the passage is to the question: cosine similarity of its best chunk (1: the same meaning)"
                >
                  relevance {source.relevance.toFixed(2)}
                </span>
              )}
              {!cited && <span className="source-uncited">not cited</span>}
            </div>
            <p className="source-snippet">{source.snippet}</p>
            {onShow && source.doc_id && (
              <button type="button" className="tool-button source-show" onClick={() => onShow(source.id)}>
                Show in document
              </button>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
