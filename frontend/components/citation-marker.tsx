"use client";
/** A clickable `[S1]` marker; hovering or focusing it previews the cited snippet. */
import type { Source } from "@/lib/types";

export function CitationMarker({ id, source, onCite }: { id: string; source?: Source; onCite?: (id: string) => void }) {
  return (
    <span className="cite">
      <button
        type="button"
        className="cite-marker"
        data-cite={id}
        aria-label={source ? `Source ${id}: ${source.document}` : `Source ${id}`}
        onClick={() => onCite?.(id)}
      >
        {id}
      </button>
      <span className="cite-preview" role="tooltip">
        {source ? (
          <>
            <strong>
              {source.document}
              {source.page != null ? `, page ${source.page}` : ""}
              {source.section ? ` · ${source.section}` : ""}
            </strong>
            <span className="cite-snippet">{source.snippet}</span>
          </>
        ) : (
          <span className="cite-snippet">The source list arrives when the answer finishes.</span>
        )}
      </span>
    </span>
  );
}
