"use client";
/** GET /api/health once at start (and on demand): which model answers, or why the backend is unreachable. */
import { useCallback, useEffect, useState } from "react";
import { api } from "@/lib/api";

export function useHealth(): { ok: boolean | null; label: string; detail: string | null; check: () => Promise<void> } {
  const [ok, setOk] = useState<boolean | null>(null);
  const [label, setLabel] = useState("");
  const [detail, setDetail] = useState<string | null>(null);

  const check = useCallback(async () => {
    try {
      const h = await api.health();
      setOk(true);
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

  return { ok, label, detail, check };
}
