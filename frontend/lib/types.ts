/** Payloads of the Ragline HTTP API and SSE stream, mirroring backend/schemas.py (names kept exactly). */

export type Mode = "auto" | "rag" | "chat";

export interface ChatRequest {
  message: string;
  thread_id?: string | null;
  mode?: Mode;
  /** false: this turn neither reads nor writes conversation memory (default true). */
  use_memory?: boolean;
}

export interface Source {
  id: string;
  document: string;
  page: number | null;
  chunk: number;
  snippet: string;
  score: number;
  /** Heading path of the chunk, when the document has structure. */
  section?: string | null;
  /** Neighbouring chunks merged into this passage, when the backend expands hits. */
  chunks?: number[] | null;
}

export interface MetadataEvent {
  thread_id: string;
  run_id: string;
}

export interface StatusEvent {
  node: string;
  phase: "start" | "progress" | "end";
  label: string;
  detail: string | null;
}

export interface TokenEvent {
  text: string;
}

export interface SourcesEvent {
  sources: Source[];
}

export interface DoneEvent {
  thread_id: string;
  answer: string;
  intent: string;
  rewritten_query: string;
  route_reason?: string;
  /** Present once the backend runs triage (e.g. FAQ answers); shape is open. */
  triage?: Record<string, unknown> | null;
  /** Present once the backend validates answers (groundedness, PII redaction); shape is open. */
  validation?: Record<string, unknown> | null;
}

export interface ErrorEvent {
  code: string;
  message: string;
}

/** SSE event name -> data payload. */
/** The final answer differs from the streamed tokens (tone rewrite, output guardrail, removed citations). */
export interface ReplaceEvent {
  text: string;
  reason: string;
}

export interface ChatEventMap {
  metadata: MetadataEvent;
  status: StatusEvent;
  token: TokenEvent;
  replace: ReplaceEvent;
  sources: SourcesEvent;
  done: DoneEvent;
  error: ErrorEvent;
}

export type ChatEvent = {
  [K in keyof ChatEventMap]: { event: K; data: ChatEventMap[K] };
}[keyof ChatEventMap];

export interface ThreadSummary {
  thread_id: string;
  title: string;
  updated_at: string;
}

export interface ThreadMessage {
  role: "user" | "assistant";
  content: string;
  sources?: Source[] | null;
}

export interface ThreadDetail {
  thread_id: string;
  title: string;
  messages: ThreadMessage[];
}

export type DocumentStatus = "queued" | "processing" | "ready" | "failed";

export interface DocumentRow {
  id: string;
  name: string;
  type: string;
  pages: number | null;
  chunks: number | null;
  size: number | null;
  ingested_at: string | null;
  status: DocumentStatus;
  progress?: number | null;
  error?: string | null;
}

export interface UploadAccepted {
  documents: { id: string; name: string; status: DocumentStatus }[];
  /** Files of a multi-file upload that were refused while others were accepted. */
  rejected?: { name: string; status: number; detail: string }[];
}

export interface Health {
  status: string;
  backend: string;
  model: string;
  embedding_model: string;
  reranker: string;
  documents: number;
  chunks: number;
}
