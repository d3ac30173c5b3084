"use client";
/**
 * "Show me where": the cited document opened at the passage, the passage highlighted and the sentence that
 * supports the answer marked inside it. Text documents show their whole extracted text; a PDF shows the page
 * the passage is on, rendered by pdf.js with the passage and sentence boxed, its extracted text folded below,
 * and a link that opens the PDF itself at that page.
 */
import { type RefObject, useEffect, useRef, useState } from "react";
import { api } from "@/lib/api";
import { ApiError } from "@/lib/sse";
import { evidenceView, type EvidenceView } from "@/lib/evidence";
import type { DocumentText, Source } from "@/lib/types";
import { PdfPage } from "./pdf-page";

export interface ViewerTarget {
  source: Source;
  claim: string;
}

/** The layout's phone width (globals.css): a PDF page drawn this narrow cannot be read. */
const NARROW = "(max-width: 760px)";

type Loaded = { doc: DocumentText; view: EvidenceView | null; copy?: string } | { error: string } | { gone: true };

/**
 * The cited passage in a document of the same name uploaded again after the cited one was deleted (a new id): the
 * tester's identical re-upload still read "no longer in the knowledge base". Only where the passage is still found.
 */
async function reuploaded(source: Source, claim: string): Promise<Loaded> {
  const name = source.document.toLowerCase(); // names are unique per collection, whatever their case
  try {
    const copies = (await api.documents()).filter(
      (d) => d.name.toLowerCase() === name && d.status === "ready" && d.id !== source.doc_id,
    );
    for (const copy of copies) {
      // the one that holds the passage: another team's file of the same name does not (review)
      const doc = await api.documentText(copy.id);
      const view = evidenceView(doc, source, claim);
      if (view) return { doc, view, copy: copy.id };
    }
  } catch {
    // no copy to offer: what the answer was given is still shown
  }
  return { gone: true };
}

export function DocumentViewer({ target, onClose }: { target: ViewerTarget; onClose: () => void }) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const supportRef = useRef<HTMLElement | null>(null);
  const closeRef = useRef<HTMLButtonElement | null>(null);
  const { source, claim } = target;
  const [narrow] = useState(() => typeof window !== "undefined" && window.matchMedia(NARROW).matches);

  useEffect(() => {
    let live = true;
    setLoaded(null);
    if (!source.doc_id) {
      setLoaded({ error: "This source has no document to open (it was indexed before documents were kept)." });
      return;
    }
    api
      .documentText(source.doc_id)
      .then((doc): Loaded => ({ doc, view: evidenceView(doc, source, claim) }))
      .catch((err: unknown) =>
        err instanceof ApiError && err.status === 404 ? reuploaded(source, claim) : Promise.reject(err),
      )
      .then(
        (found) => live && setLoaded(found),
        (err: unknown) => live && setLoaded({ error: err instanceof Error ? err.message : String(err) }),
      );
    return () => {
      live = false;
    };
  }, [source, claim]);

  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    // Once, on opening: the parent passes a new onClose each render, and refocusing then would steal the focus.
    closeRef.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && close.current();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  useEffect(() => {
    supportRef.current?.scrollIntoView({ block: "center" });
  }, [loaded]);

  const view = loaded && "doc" in loaded ? loaded.view : null;
  const copy = loaded && "doc" in loaded ? loaded.copy : undefined;
  const docId = copy ?? source.doc_id;
  const fileUrl = docId ? api.documentFileUrl(docId) : null;
  // A PDF page's extracted text, folded below the page; on a phone the page drawn 360 px wide is a few pixels a line
  // (tester, 390 px), so the text comes first, open at the sentence.
  const pageText = view && view.page != null && (
    <details className="doc-text-details" open={narrow || undefined}>
      <summary>Extracted text of page {view.page}</summary>
      <TextView view={view} id={source.id} supportRef={narrow ? supportRef : undefined} />
    </details>
  );
  return (
    <aside className="doc-viewer" role="dialog" aria-modal="false" aria-label={`${source.id}: ${source.document}`}>
      <header className="doc-viewer-head">
        <span className="source-id">{source.id}</span>
        <strong className="doc-viewer-name">{source.document}</strong>
        {view?.page != null && <span className="source-meta">page {view.page}</span>}
        {source.section && <span className="source-meta">{source.section}</span>}
        {view?.page != null && fileUrl && (
          <a className="tool-button" href={`${fileUrl}#page=${view.page}`} target="_blank" rel="noopener noreferrer">
            Open the PDF at page {view.page}
          </a>
        )}
        <button ref={closeRef} type="button" className="tool-button" onClick={onClose} aria-label="Close document">
          Close
        </button>
      </header>
      {claim && (
        <p className="doc-viewer-claim">
          <span className="source-meta">Answer:</span> {claim}
        </p>
      )}
      <div className="doc-viewer-body" data-loading={!loaded || undefined}>
        {!loaded && <p className="source-meta">Opening {source.document}…</p>}
        {loaded && "error" in loaded && (
          <p className="turn-error" role="alert">
            Could not open {source.document}: {loaded.error}
          </p>
        )}
        {loaded && "gone" in loaded && (
          <>
            <p className="source-meta" role="status">
              {source.document} is no longer in the knowledge base: it was deleted after this answer was written. The
              passage the answer was given:
            </p>
            <blockquote>{source.snippet}</blockquote>
          </>
        )}
        {copy && (
          <p className="source-meta" role="status">
            The cited copy of {source.document} was deleted; this is the one uploaded again, which holds the same
            passage.
          </p>
        )}
        {loaded && "doc" in loaded && !view && (
          <>
            <p className="source-meta" role="status">
              {source.start == null
                ? "The passage could not be located in this document; its snippet:"
                : `${source.document} has changed since this answer was written: the cited passage is no longer where it was. The passage began:`}
            </p>
            <blockquote>{source.snippet}</blockquote>
          </>
        )}
        {narrow && pageText}
        {view && view.page != null && fileUrl && (
          <PdfPage
            url={fileUrl}
            page={view.page}
            passage={view.passageBefore + view.support + view.passageAfter}
            support={view.support}
            scroll={!narrow}
          />
        )}
        {!narrow && pageText}
        {view && view.page == null && <TextView view={view} id={source.id} supportRef={supportRef} />}
      </div>
    </aside>
  );
}

/** The document's text with the passage highlighted and the supporting sentence marked inside it. */
function TextView({
  view,
  id,
  supportRef,
}: {
  view: EvidenceView;
  id: string;
  supportRef?: RefObject<HTMLElement | null>;
}) {
  return (
    <pre className="doc-text">
      {view.before}
      <mark className="passage" data-passage={id}>
        {view.passageBefore}
        <mark className="support" ref={supportRef}>
          {view.support}
        </mark>
        {view.passageAfter}
      </mark>
      {view.after}
    </pre>
  );
}
