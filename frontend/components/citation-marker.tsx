"use client";
/** A clickable `[S1]` marker; hovering or focusing it previews the cited snippet, above it (below it when the marker
 * sits too close to the top) and within the conversation's column (lib/preview-place.ts). */
import { useState } from "react";
import { type PreviewPlace, placePreview } from "@/lib/preview-place";
import type { Source } from "@/lib/types";

/** The visible part of the conversation's scroll box (its scrollbar left out), or the window's. */
function columnOf(el: HTMLElement) {
  const scroller = el.closest<HTMLElement>(".messages");
  if (!scroller) return { left: 0, right: document.documentElement.clientWidth, top: 0 };
  const box = scroller.getBoundingClientRect();
  const left = box.left + scroller.clientLeft;
  return { left, right: left + scroller.clientWidth, top: Math.max(0, box.top) };
}

export function CitationMarker({
  id,
  source,
  onCite,
}: {
  id: string;
  source?: Source;
  onCite?: (id: string, marker: HTMLElement) => void;
}) {
  const [place, setPlace] = useState<PreviewPlace | null>(null);
  const measure = (e: React.SyntheticEvent<HTMLElement>) => {
    const cite = e.currentTarget;
    setPlace(placePreview(cite.getBoundingClientRect(), columnOf(cite), window.innerWidth));
  };
  const style = place
    ? ({ "--cite-width": `${place.width}px`, "--cite-shift": `${place.shift}px` } as React.CSSProperties)
    : undefined;
  return (
    <span
      className="cite"
      data-below={place?.below || undefined}
      style={style}
      onMouseEnter={measure}
      onFocus={measure}
    >
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
