"use client";
/** GET /api/health at start and on demand, and every few seconds while the backend is unreachable (so the
 * banner goes away by itself when it is back): which model answers, or why the backend cannot be reached. */
import { useCallback, useEffect, useState } from "react";
import { api } from "@/lib/api";

const OFFLINE_RECHECK_MS = 5000; // how often an unreachable backend is asked again

export interface HealthState {
  ok: boolean | null;
  label: string;
  detail: string | null;
  /** The longest message the server accepts (null until it answered once). */
  maxChars: number | null;
  check: () => Promise<void>;
}

export function useHealth(): HealthState {
  const [ok, setOk] = useState<boolean | null>(null);
  const [maxChars, setMaxChars] = useState<number | null>(null);
  const [label, setLabel] = useState("");
  const [detail, setDetail] = useState<string | null>(null);

  const check = useCallback(async () => {
    try {
      const h = await api.health();
      setOk(true);
      setMaxChars(h.max_message_chars);
      setLabel(`${h.backend} · ${h.model}`);
      const server = h.model_server ? ` at ${h.model_server}` : "";
      setDetail(`${h.model}${server}; ${h.documents} documents, ${h.chunks} chunks; embeddings ${h.embedding_model}`);
    } catch (err) {
      setOk(false);
      setDetail(err instanceof Error ? err.message : String(err));
    }
  }, []);

  useEffect(() => {
    void check();
  }, [check]);

  useEffect(() => {
    if (ok !== false) return;
    const timer = setInterval(() => void check(), OFFLINE_RECHECK_MS);
    return () => clearInterval(timer);
  }, [ok, check]);

  return { ok, label, detail, maxChars, check };
}
