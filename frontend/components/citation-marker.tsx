"use client";
/** A clickable `[S1]` marker; hovering or focusing it previews the cited snippet (above it, or below it when the
 * marker sits too close to the top for the preview to fit under the header). */
import { useState } from "react";
import type { Source } from "@/lib/types";

const PREVIEW_ROOM_PX = 190; // about the tallest preview: a title line and six lines of snippet

export function CitationMarker({
  id,
  source,
  onCite,
}: {
  id: string;
  source?: Source;
  onCite?: (id: string, marker: HTMLElement) => void;
}) {
  const [below, setBelow] = useState(false);
  const place = (e: React.SyntheticEvent<HTMLElement>) => {
    const top = e.currentTarget.getBoundingClientRect().top;
    const header = document.querySelector(".topbar")?.getBoundingClientRect().bottom ?? 0;
    setBelow(top - Math.max(0, header) < PREVIEW_ROOM_PX);
  };
  return (
    <span className="cite" data-below={below || undefined} onMouseEnter={place} onFocus={place}>
      <button
        type="button"
        className="cite-marker"
        data-cite={id}
        aria-label={source ? `Source ${id}: ${source.document}` : `Source ${id}`}
        onClick={(e) => onCite?.(id, e.currentTarget)}
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
