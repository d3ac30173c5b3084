"use client";
/** The documents page: upload (into a collection, with accounts on) with progress, the list with ingestion status,
 * move to another collection (accounts on), delete. */
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import { isPending, useDocuments } from "@/hooks/use-documents";
import { uploadDocuments } from "@/lib/api";
import { api } from "@/lib/api";
import { collectionLabel, mayDelete, moveTargets } from "@/lib/collections";
import type { Collection, DocumentRow } from "@/lib/types";
import { acceptedResult, refusedResult } from "@/lib/uploads";
import { useAuthStatus } from "./auth-gate";
import { ThemeToggle } from "./theme-toggle";
import { type Upload, UploadList } from "./upload-list";

function formatSize(bytes: number | null | undefined): string {
  if (bytes == null) return "—";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function formatDate(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

function StatusCell({ doc }: { doc: DocumentRow }) {
  const pct = doc.progress != null ? Math.round(doc.progress * 100) : null;
  return (
    <span className={`doc-status doc-status-${doc.status}`} data-status={doc.status} title={doc.error ?? undefined}>
      {doc.status}
      {isPending(doc) && pct != null ? ` ${pct}%` : ""}
      {doc.status === "failed" && doc.error ? `: ${doc.error}` : ""}
    </span>
  );
}

/**
 * The collections the user may read; null when the server has none (accounts off: not even asked); undefined while
 * they are not known (loading, or the request failed), when no row offers Move or Delete.
 */
function useCollections(): Collection[] | null | undefined {
  const [collections, setCollections] = useState<Collection[] | undefined>(undefined);
  const mode = useAuthStatus()?.mode;
  useEffect(() => {
    if (mode !== "local") return;
    api.collections().then(setCollections, () => setCollections(undefined));
  }, [mode]);
  return mode === "local" ? collections : null;
}

/** The "Move to…" step of a row: the other collections the user may write, Move and Cancel. */
function MovePicker({
  doc,
  targets,
  onMove,
  onCancel,
}: {
  doc: DocumentRow;
  targets: Collection[];
  onMove: (collectionId: string) => Promise<void>;
  onCancel: () => void;
}) {
  const [destination, setDestination] = useState("");
  const [moving, setMoving] = useState(false);
  return (
    <>
      <select
        aria-label={`Move ${doc.name} to`}
        autoFocus
        value={destination}
        onChange={(e) => setDestination(e.target.value)}
        onKeyDown={(e) => e.key === "Escape" && onCancel()}
      >
        <option value="">Move to…</option>
        {targets.map((c) => (
          <option key={c.id} value={c.id}>
            {collectionLabel(c)}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="tool-button"
        disabled={!destination || moving}
        onClick={() => {
          setMoving(true);
          void onMove(destination).finally(() => setMoving(false));
        }}
      >
        Move
      </button>
      <button type="button" className="tool-button" onClick={onCancel}>
        Cancel
      </button>
    </>
  );
}

function DocumentRowView({
  doc,
  collection,
  targets,
  deletable,
  onMove,
  onDelete,
}: {
  doc: DocumentRow;
  collection?: string;
  /** The collections it may be moved to (none: no Move… action). */
  targets: Collection[];
  /** Whether the user may delete it (no Delete action otherwise). */
  deletable: boolean;
  onMove: (id: string, collectionId: string) => Promise<void>;
  onDelete: (id: string) => Promise<void>;
}) {
  const [mode, setMode] = useState<"view" | "move" | "confirm">("view");
  const [error, setError] = useState<string | null>(null);
  const fail = (e: unknown) => setError(e instanceof Error ? e.message : String(e));
  const move = (collectionId: string) =>
    onMove(doc.id, collectionId).then(() => (setError(null), setMode("view")), fail);
  return (
    <>
      <tr data-document={doc.name}>
        <td className="doc-name">{doc.name}</td>
        {collection !== undefined && <td data-collection={doc.collection}>{collection}</td>}
        <td className="col-detail">{doc.type || "—"}</td>
        <td className="num col-detail">{doc.pages ?? "—"}</td>
        <td className="num col-detail">{doc.chunks ?? "—"}</td>
        <td className="num">{formatSize(doc.size)}</td>
        <td className="col-detail">{formatDate(doc.ingested_at)}</td>
        <td>
          <StatusCell doc={doc} />
        </td>
        <td className="doc-actions">
          {mode === "confirm" ? (
            <>
              <button
                type="button"
                className="tool-button danger"
                autoFocus
                onClick={() => onDelete(doc.id).catch(fail)}
              >
                Delete
              </button>
              <button type="button" className="tool-button" onClick={() => setMode("view")}>
                Cancel
              </button>
            </>
          ) : mode === "move" && targets.length > 0 ? (
            <MovePicker doc={doc} targets={targets} onMove={move} onCancel={() => setMode("view")} />
          ) : (
            <>
              {targets.length > 0 && (
                <button
                  type="button"
                  className="tool-button"
                  aria-label={`Move ${doc.name} to another collection`}
                  onClick={() => setMode("move")}
                >
                  Move…
                </button>
              )}
              {deletable && (
                <button
                  type="button"
                  className="tool-button"
                  aria-label={`Delete ${doc.name}`}
                  onClick={() => setMode("confirm")}
                >
                  Delete
                </button>
              )}
            </>
          )}
        </td>
      </tr>
      {error && (
        // A row of its own under the document's, ending under its actions: a wide table scrolls sideways, and the
        // reason must be in view next to the button that failed.
        <tr data-error-for={doc.name}>
          <td colSpan={collection !== undefined ? 9 : 8} style={{ whiteSpace: "normal", textAlign: "right" }}>
            <span className="thread-error" role="alert">
              {error}
            </span>
          </td>
        </tr>
      )}
    </>
  );
}

export function DocumentsView() {
  const { documents, available, loaded, error, refresh, setDocuments } = useDocuments({ poll: true });
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const counter = useRef(0);
  const collections = useCollections();
  const writable = (collections ?? []).filter((c) => c.can_write);
  const [target, setTarget] = useState<string>("");
  const names = new Map((collections ?? []).map((c) => [c.id, c.name]));

  const upload = async (files: File[]) => {
    if (files.length === 0) return;
    const key = ++counter.current;
    const names = files.map((f) => f.name).join(", ");
    const patch = (change: Partial<Upload>) =>
      setUploads((all) => all.map((u) => (u.key === key ? { ...u, ...change } : u)));
    setUploads((all) => [{ key, names, progress: 0 }, ...all].slice(0, 5));
    try {
      const accepted = await uploadDocuments(files, (progress) => patch({ progress }), target || undefined);
      patch({ progress: 1, result: acceptedResult(accepted) });
      await refresh();
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      patch({
        result: refusedResult(
          files.map((f) => f.name),
          detail,
        ),
      });
    }
  };

  const remove = async (id: string) => {
    await api.deleteDocument(id);
    setDocuments((all) => all.filter((d) => d.id !== id));
  };

  const move = async (id: string, collectionId: string) => {
    const moved = await api.moveDocument(id, collectionId);
    await refresh();
    // A listing already under way when the move landed may predate it: the server's answer has the row as it is now.
    setDocuments((all) => all.map((d) => (d.id === id ? moved : d)));
  };

  return (
    <div className="docs-page">
      <header className="docs-header">
        <Link href="/" className="nav-link">
          ← Chat
        </Link>
        <h1>Documents</h1>
        <ThemeToggle />
      </header>

      <section
        className="dropzone"
        data-dragging={dragging || undefined}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          void upload([...e.dataTransfer.files]);
        }}
        aria-label="Upload documents"
      >
        <p>Drop files here, or</p>
        <label className="button">
          Choose files…
          <input
            ref={input}
            type="file"
            multiple
            className="visually-hidden"
            aria-label="Choose files to upload"
            onChange={(e) => {
              void upload([...(e.target.files ?? [])]);
              e.target.value = "";
            }}
          />
        </label>
        {writable.length > 0 && (
          <label className="collection-picker">
            Into{" "}
            <select value={target} onChange={(e) => setTarget(e.target.value)} aria-label="Upload into collection">
              {writable.map((c) => (
                <option key={c.id} value={c.kind === "personal" ? "" : c.id}>
                  {collectionLabel(c)}
                </option>
              ))}
            </select>
          </label>
        )}
        <p className="hint">They are chunked, embedded and then searchable in chat with @name.</p>
      </section>

      <UploadList uploads={uploads} />

      {!available && (
        <p className="banner" role="alert">
          This backend has no documents API yet (GET /api/documents answered 404). Use ./scripts/ingest meanwhile.
        </p>
      )}
      {error && (
        <p className="banner" role="alert">
          Could not load the documents: {error}{" "}
          <button type="button" className="tool-button" onClick={() => void refresh()}>
            Retry
          </button>
        </p>
      )}

      <div className="table-wrap">
        <table className="docs-table">
          <thead>
            <tr>
              <th>Name</th>
              {collections !== null && <th>Collection</th>}
              <th className="col-detail">Type</th>
              <th className="num col-detail">Pages</th>
              <th className="num col-detail">Chunks</th>
              <th className="num">Size</th>
              <th className="col-detail">Ingested</th>
              <th>Status</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {documents.map((d) => (
              <DocumentRowView
                key={d.id}
                doc={d}
                collection={collections !== null ? (names.get(d.collection ?? "") ?? "—") : undefined}
                targets={moveTargets(collections, d.collection)}
                deletable={mayDelete(collections, d.collection)}
                onMove={move}
                onDelete={remove}
              />
            ))}
            {loaded && available && documents.length === 0 && (
              <tr>
                <td colSpan={collections !== null ? 9 : 8} className="empty-row">
                  No documents yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </div>
  );
}
