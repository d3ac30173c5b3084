"use client";
/**
 * One page of a PDF rendered by pdf.js (Mozilla's viewer library), with the cited passage and its supporting
 * sentence highlighted over the page: the page's text items are matched against the passage's text
 * (whitespace and case folded) and a box is drawn over each matching item.
 */
import { useEffect, useRef, useState } from "react";
import { type Box, boxStyle, matchBoxes } from "@/lib/pdf-match";

type Status = "loading" | "ready" | { error: string };

export function PdfPage({
  url,
  page,
  passage,
  support,
  scroll = true,
}: {
  url: string;
  page: number;
  passage: string;
  support: string;
  /** Scroll the boxed sentence into view once drawn (not when the page's text above it holds the reader's place). */
  scroll?: boolean;
}) {
  const holder = useRef<HTMLDivElement | null>(null);
  const canvasRef = useRef<HTMLCanvasElement | null>(null);
  const [boxes, setBoxes] = useState<Box[]>([]);
  const [size, setSize] = useState({ width: 1, height: 1 }); // the page as drawn, in CSS pixels
  const [status, setStatus] = useState<Status>("loading");

  useEffect(() => {
    let live = true;
    let destroy: (() => void) | undefined;
    (async () => {
      const pdfjs = await import("pdfjs-dist");
      if (!pdfjs.GlobalWorkerOptions.workerPort) {
        pdfjs.GlobalWorkerOptions.workerPort = new Worker(
          new URL("pdfjs-dist/build/pdf.worker.min.mjs", import.meta.url),
          { type: "module" },
        );
      }
      const task = pdfjs.getDocument({ url });
      destroy = () => void task.destroy();
      const pdf = await task.promise;
      const p = await pdf.getPage(page);
      const width = Math.max((holder.current?.clientWidth || 600) - 2, 100); // inside the sheet's 1 px border
      const viewport = p.getViewport({ scale: width / p.getViewport({ scale: 1 }).width });
      const canvas = canvasRef.current;
      if (!live || !canvas) return;
      const ratio = window.devicePixelRatio || 1;
      canvas.width = Math.floor(viewport.width * ratio);
      canvas.height = Math.floor(viewport.height * ratio);
      await p.render({ canvas, viewport, transform: ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0] }).promise;
      const content = await p.getTextContent();
      const items = content.items.flatMap((item) =>
        "str" in item
          ? [
              {
                str: item.str,
                hasEOL: item.hasEOL,
                rect: rectOf(pdfjs.Util.transform(viewport.transform, item.transform), item.width * viewport.scale),
              },
            ]
          : [],
      );
      if (!live) return;
      setSize({ width: viewport.width, height: viewport.height });
      setBoxes(matchBoxes(items, passage, support));
      setStatus("ready");
    })().catch((err: unknown) => live && setStatus({ error: err instanceof Error ? err.message : String(err) }));
    return () => {
      live = false;
      destroy?.();
    };
  }, [url, page, passage, support]);

  useEffect(() => {
    if (scroll && status === "ready")
      holder.current?.querySelector(".pdf-support")?.scrollIntoView({ block: "center" });
  }, [status, boxes, scroll]);

  return (
    <div className="pdf-page" ref={holder} data-status={typeof status === "string" ? status : "error"}>
      {typeof status === "object" && (
        <p className="source-meta" role="alert">
          The PDF page could not be rendered ({status.error}); its text is below.
        </p>
      )}
      <div className="pdf-sheet">
        <canvas ref={canvasRef} className="pdf-canvas" aria-label={`Page ${page}`} />
        {boxes.map((b, i) => (
          <span
            key={i}
            className={b.support ? "pdf-box pdf-support" : "pdf-box pdf-passage"}
            style={boxStyle(b, size)}
          />
        ))}
      </div>
    </div>
  );
}

/** The on-page box of a text item from its viewport transform (baseline at f, font height from the matrix). */
function rectOf(tx: number[], width: number): { left: number; top: number; width: number; height: number } {
  const height = Math.hypot(tx[2], tx[3]);
  return { left: tx[4], top: tx[5] - height, width, height: height * 1.2 };
}
