/**
 * Payloads of the Ragline HTTP API and SSE stream: names for the models in the backend's OpenAPI schema.
 * The shapes come from api.gen.ts (`./scripts/gen-contract` regenerates it from backend/contract); nothing is
 * declared here by hand, so a backend change that the UI does not follow fails `tsc`.
 */
import type { components } from "./api.gen";

type Schemas = components["schemas"];

/** A body the UI sends: openapi-typescript marks fields with a server default as required; here they may be left out. */
type WithDefaults<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

export type ChatRequest = WithDefaults<
  Schemas["ChatRequest"],
  "mode" | "use_memory" | "on_disconnect" | "guardrail" | "user_context" | "keep_scope"
>;
export type Mode = Schemas["ChatRequest"]["mode"];
export type GuardrailMode = Schemas["ChatRequest"]["guardrail"];

/** A passage numbered S1, S2, … by the thread's citation ledger (the API's PublicSource). */
export type Source = Schemas["PublicSource"];
export type Triage = Schemas["Triage"];
/** The documents a turn's search was limited to: @-mentioned, or kept by a follow-up ("carried"). */
export type Scope = Schemas["Scope"];
export type Validation = Schemas["Validation"];

export type MetadataEvent = Schemas["MetadataEvent"];
export type StatusEvent = Schemas["StatusEvent"];
export type TokenEvent = Schemas["TokenEvent"];
/** The final answer differs from the streamed tokens (tone rewrite, output guardrail, removed citations). */
export type ReplaceEvent = Schemas["ReplaceEvent"];
export type SourcesEvent = Schemas["SourcesEvent"];
export type DoneEvent = Schemas["DoneEvent"];
export type ErrorEvent = Schemas["ErrorEvent"];
/** Last event of a run that did not finish: stopped (POST /api/runs/{id}/cancel) or interrupted by a restart. */
export type StoppedEvent = Schemas["StoppedEvent"];

/** SSE event name -> data payload. */
export interface ChatEventMap {
  metadata: MetadataEvent;
  status: StatusEvent;
  token: TokenEvent;
  replace: ReplaceEvent;
  sources: SourcesEvent;
  done: DoneEvent;
  error: ErrorEvent;
  stopped: StoppedEvent;
}

/** Compile-time check: ChatEventMap names exactly the events the schema's ChatStreamEvent lists. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _eventsMatch: Same<keyof ChatEventMap, Schemas["ChatStreamEvent"]["event"]> = true;
void _eventsMatch;

export type ChatEvent = {
  [K in keyof ChatEventMap]: { event: K; data: ChatEventMap[K] };
}[keyof ChatEventMap];

export type ThreadSummary = Schemas["ThreadSummary"];
export type ThreadMessage = Schemas["MessageOut"];
export type ThreadDetail = Schemas["ThreadDetail"];
export type RunInfo = Schemas["RunInfo"];

export type DocumentRow = Schemas["DocumentOut"];
export type Collection = Schemas["CollectionOut"];
export type DocumentStatus = DocumentRow["status"];
export type DocumentText = Schemas["DocumentText"];

export type UploadAccepted = Schemas["UploadAccepted"];
export type UploadRejected = Schemas["UploadRejected"];

export type Health = Schemas["Health"];
export type ErrorBody = Schemas["ErrorBody"];
