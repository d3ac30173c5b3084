/** Typed calls to the Ragline REST API, through the same-origin /api proxy. */
import { csrfHeaders } from "./csrf";
import { ApiError, errorDetail } from "./sse";
import type {
  Collection,
  DocumentRow,
  DocumentText,
  Health,
  RunInfo,
  ThreadDetail,
  ThreadSummary,
  UploadAccepted,
} from "./types";

/** What a call says when no answer came back at all (the server stopped, or the network is down). */
export const UNREACHABLE = "Cannot reach the Ragline server: it may have stopped or be restarting. Try again shortly.";

/** A JSON call through the proxy; writes carry the CSRF header; a failure is an ApiError with the server's detail. */
export async function call<T>(path: string, init?: RequestInit): Promise<T> {
  const method = (init?.method ?? "GET").toUpperCase();
  const headers = {
    ...(init?.headers as Record<string, string> | undefined),
    ...(method === "GET" ? {} : csrfHeaders()),
  };
  let res: Response;
  try {
    res = await fetch(path, { cache: "no-store", ...init, headers });
  } catch {
    throw new ApiError(UNREACHABLE, 0); // the browser's own words are "Failed to fetch" (tester)
  }
  if (!res.ok) throw new ApiError(await errorDetail(res), res.status);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** The request options of a JSON body. */
export const json = (body: unknown): RequestInit => ({
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

export const api = {
  health: () => call<Health>("/api/health"),
  threads: () => call<ThreadSummary[]>("/api/threads"),
  thread: (id: string) => call<ThreadDetail>(`/api/threads/${encodeURIComponent(id)}`),
  renameThread: (id: string, title: string) =>
    call<ThreadSummary>(`/api/threads/${encodeURIComponent(id)}`, { method: "PATCH", ...json({ title }) }),
  /** Stop a run on the server (the model request with it); resolves once it has ended. */
  cancelRun: (id: string) => call<RunInfo>(`/api/runs/${encodeURIComponent(id)}/cancel`, { method: "POST" }),
  deleteThread: (id: string) => call<void>(`/api/threads/${encodeURIComponent(id)}`, { method: "DELETE" }),
  documents: () => call<DocumentRow[]>("/api/documents"),
  document: (id: string) => call<DocumentRow>(`/api/documents/${encodeURIComponent(id)}`),
  /** The original file (a PDF opens inline); `#page=N` opens a PDF at a page. */
  documentFileUrl: (id: string) => `/api/documents/${encodeURIComponent(id)}/file`,
  documentText: (id: string) => call<DocumentText>(`/api/documents/${encodeURIComponent(id)}/text`),
  deleteDocument: (id: string) => call<void>(`/api/documents/${encodeURIComponent(id)}`, { method: "DELETE" }),
  /** File a document in another collection (accounts on; you must be allowed to write both). */
  moveDocument: (id: string, collectionId: string) =>
    call<DocumentRow>(`/api/documents/${encodeURIComponent(id)}`, {
      method: "PATCH",
      ...json({ collection_id: collectionId }),
    }),
  /** The collections you may read (404 with RAG_AUTH=off, where there are none). */
  collections: () => call<Collection[]>("/api/collections"),
};

/**
 * POST /api/documents as multipart (field `files`, and `collection` when one is chosen) with upload progress,
 * which fetch cannot report. `onProgress` gets 0..1 as bytes go out.
 */
export function uploadDocuments(
  files: File[],
  onProgress: (fraction: number) => void,
  collection?: string,
): Promise<UploadAccepted> {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    if (collection) form.append("collection", collection);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/documents");
    for (const [name, value] of Object.entries(csrfHeaders())) xhr.setRequestHeader(name, value);
    xhr.responseType = "text";
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      let body: { detail?: unknown } & Partial<UploadAccepted> = {};
      try {
        body = JSON.parse(xhr.responseText || "{}");
      } catch {
        /* not JSON */
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve({ documents: body.documents ?? [], rejected: body.rejected ?? [] });
      } else {
        const detail = typeof body.detail === "string" ? body.detail : xhr.responseText || `HTTP ${xhr.status}`;
        reject(new ApiError(detail, xhr.status));
      }
    };
    xhr.onerror = () => reject(new ApiError("Network error: the upload did not reach the server.", 0));
    xhr.send(form);
  });
}
