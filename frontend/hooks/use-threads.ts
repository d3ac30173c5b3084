"use client";
/** The threads sidebar's data: list (newest first), rename and delete. */
import { useCallback, useEffect, useState } from "react";
import { api } from "@/lib/api";
import type { ThreadSummary } from "@/lib/types";

export interface UseThreads {
  threads: ThreadSummary[];
  error: string | null;
  refresh: () => Promise<void>;
  /** Show a new thread at the top at once, before the list is fetched again (the server lists it from its first run on). */
  showNew: (id: string, title: string) => void;
  rename: (id: string, title: string) => Promise<void>;
  remove: (id: string) => Promise<void>;
}

export function useThreads(): UseThreads {
  const [threads, setThreads] = useState<ThreadSummary[]>([]);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      setThreads(await api.threads());
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const showNew = useCallback((id: string, title: string) => {
    setThreads((all) =>
      all.some((t) => t.thread_id === id)
        ? all
        : [{ thread_id: id, title, updated_at: new Date().toISOString(), via_api: false }, ...all],
    );
  }, []);

  const rename = useCallback(async (id: string, title: string) => {
    const row = await api.renameThread(id, title);
    setThreads((all) => all.map((t) => (t.thread_id === id ? { ...t, title: row.title } : t)));
  }, []);

  const remove = useCallback(async (id: string) => {
    await api.deleteThread(id);
    setThreads((all) => all.filter((t) => t.thread_id !== id));
  }, []);

  return { threads, error, refresh, showNew, rename, remove };
}
