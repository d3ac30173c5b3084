"use client";
/** The knowledge base's documents (GET /api/documents), polled while any is still being ingested. */
import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "@/lib/api";
import { ApiError } from "@/lib/sse";
import type { DocumentRow } from "@/lib/types";

export const isPending = (d: DocumentRow) => d.status === "queued" || d.status === "processing";

export interface UseDocuments {
  documents: DocumentRow[];
  /** False when the backend has no documents API (404/405): mentions are then not checked. */
  available: boolean;
  loaded: boolean;
  error: string | null;
  refresh: () => Promise<void>;
  setDocuments: React.Dispatch<React.SetStateAction<DocumentRow[]>>;
}

export function useDocuments({ poll = false }: { poll?: boolean } = {}): UseDocuments {
  const [documents, setDocuments] = useState<DocumentRow[]>([]);
  const [available, setAvailable] = useState(true);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inFlight = useRef<Promise<void> | null>(null);

  const refresh = useCallback(() => {
    if (inFlight.current) return inFlight.current;
    const p = api
      .documents()
      .then((rows) => {
        setDocuments(rows);
        setAvailable(true);
        setError(null);
      })
      .catch((err: unknown) => {
        if (err instanceof ApiError && (err.status === 404 || err.status === 405)) setAvailable(false);
        else setError(err instanceof Error ? err.message : String(err));
      })
      .finally(() => {
        inFlight.current = null;
        setLoaded(true);
      });
    inFlight.current = p;
    return p;
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const pending = documents.some(isPending);
  useEffect(() => {
    if (!poll || !pending) return;
    const timer = setInterval(() => void refresh(), 1000);
    return () => clearInterval(timer);
  }, [poll, pending, refresh]);

  return { documents, available, loaded, error, refresh, setDocuments };
}
