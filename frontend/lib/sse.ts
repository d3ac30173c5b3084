/**
 * A small typed client for Ragline's SSE stream. The request is a POST with a JSON body, so
 * EventSource cannot be used: the response body of `fetch` is parsed frame by frame instead.
 */
import { SSE_EVENTS } from "./contract.gen";
import { csrfHeaders } from "./csrf";
import type { ChatEvent, ChatRequest } from "./types";

export interface SseFrame {
  event: string;
  data: string;
  id?: string;
}

/**
 * Incremental parser for the text/event-stream format (WHATWG HTML, "server-sent events").
 * Feed it chunks as they arrive; frames split across chunks, CRLF or LF line ends, multi-line
 * `data:` and comment lines (`: ping`) are handled. Returns the frames completed by this chunk.
 */
export class SseParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];
  private id: string | undefined;

  push(chunk: string): SseFrame[] {
    this.buffer += chunk;
    const frames: SseFrame[] = [];
    let start = 0;
    for (;;) {
      const nl = this.nextLineEnd(start);
      if (nl === -1) break;
      const line = this.buffer.slice(start, nl.index);
      start = nl.index + nl.length;
      const frame = this.line(line);
      if (frame) frames.push(frame);
    }
    this.buffer = this.buffer.slice(start);
    return frames;
  }

  /** Dispatch whatever is pending when the stream closes without a trailing blank line. */
  end(): SseFrame[] {
    const frames = this.buffer ? this.push("\n") : [];
    const last = this.line("");
    return last ? [...frames, last] : frames;
  }

  private nextLineEnd(from: number): { index: number; length: number } | -1 {
    for (let i = from; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c === "\n") return { index: i, length: 1 };
      if (c === "\r") {
        // A lone CR at the very end may be the first half of CRLF: wait for more input.
        if (i + 1 === this.buffer.length) return -1;
        return { index: i, length: this.buffer[i + 1] === "\n" ? 2 : 1 };
      }
    }
    return -1;
  }

  private line(line: string): SseFrame | null {
    if (line === "") {
      if (this.data.length === 0) {
        this.event = "";
        return null;
      }
      const frame: SseFrame = { event: this.event || "message", data: this.data.join("\n") };
      if (this.id !== undefined) frame.id = this.id;
      this.event = "";
      this.data = [];
      return frame;
    }
    if (line.startsWith(":")) return null; // comment, e.g. the heartbeat ": ping"
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id") this.id = value;
    return null;
  }
}

const KNOWN_EVENTS = new Set<string>(SSE_EVENTS);

/** A parsed frame as a typed chat event, or null for unknown events and undecodable data. */
export function toChatEvent(frame: SseFrame): ChatEvent | null {
  if (!KNOWN_EVENTS.has(frame.event)) return null;
  try {
    return { event: frame.event, data: JSON.parse(frame.data) } as ChatEvent;
  } catch {
    return null;
  }
}

/**
 * How long a stream may stay silent before it counts as lost: three of the server's keep-alive pings
 * (RAG_HEARTBEAT_SECONDS, 15 s by default), which come while the model is still reading a long prompt too. A
 * connection that dies without closing (a laptop asleep, a Wi-Fi change, a proxy that drops it) gave no error, and
 * the answer waited for ever.
 */
export const STALL_MS = 45_000;

/** Nothing came on the stream, not even a keep-alive ping, for `STALL_MS`. */
export class StreamStalledError extends Error {
  constructor(ms: number) {
    super(`Nothing came from the server for ${Math.round(ms / 1000)} s (connection lost?).`);
    this.name = "StreamStalledError";
  }
}

/** The reader's next chunk, or StreamStalledError when none comes within `ms`. */
async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StreamStalledError(ms)), ms);
  });
  try {
    return await Promise.race([reader.read(), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Frames of a byte stream, decoded as UTF-8 (multi-byte characters split across chunks included). A stream silent
 * for `stallMs` is cancelled and throws StreamStalledError, which a follower treats as a lost connection.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, stallMs = STALL_MS): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await readWithin(reader, stallMs);
      } catch (err) {
        if (err instanceof StreamStalledError) await reader.cancel(err).catch(() => undefined); // ends the request
        throw err;
      }
      if (chunk.done) break;
      yield* parser.push(decoder.decode(chunk.value, { stream: true }));
    }
    yield* parser.push(decoder.decode());
    yield* parser.end();
  } finally {
    reader.releaseLock();
  }
}

/** An HTTP error from the API, carrying the server's `detail` when it sent one. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The `detail` of a FastAPI error body, or a generic message. */
export async function errorDetail(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    if (typeof body.detail === "string") return body.detail;
    if (Array.isArray(body.detail)) return body.detail.map((d: { msg?: string }) => d.msg ?? String(d)).join("; ");
  } catch {
    /* not JSON */
  }
  return text.trim() || `HTTP ${res.status} ${res.statusText}`;
}

/** A chat event with its number in the run (the SSE `id:`), to re-attach after it. */
export type NumberedChatEvent = ChatEvent & { id?: number };

async function* chatEvents(res: Response): AsyncGenerator<NumberedChatEvent> {
  if (!res.ok || !res.body) throw new ApiError(await errorDetail(res), res.status);
  for await (const frame of readSse(res.body)) {
    const event = toChatEvent(frame);
    if (event) yield frame.id !== undefined ? { ...event, id: Number(frame.id) } : event;
  }
}

/**
 * POST /api/chat/stream and yield its typed events. The run lives on the server: aborting `signal` only detaches
 * (follow it again with `followRun`), unless the request says `on_disconnect: "cancel"`. Throws ApiError on a
 * non-2xx answer; network failures propagate.
 */
export async function* streamChat(
  request: ChatRequest,
  signal?: AbortSignal,
  fetchImpl: typeof fetch = fetch,
): AsyncGenerator<NumberedChatEvent> {
  const res = await fetchImpl("/api/chat/stream", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...csrfHeaders() },
    body: JSON.stringify(request),
    signal,
    cache: "no-store",
  });
  yield* chatEvents(res);
}

/** GET /api/runs/{id}/stream: the run's events numbered above `after`, then the live ones until it ends. */
export async function* followRun(
  runId: string,
  after: number,
  signal?: AbortSignal,
  fetchImpl: typeof fetch = fetch,
): AsyncGenerator<NumberedChatEvent> {
  const res = await fetchImpl(`/api/runs/${encodeURIComponent(runId)}/stream?after=${after}`, {
    headers: { accept: "text/event-stream" },
    signal,
    cache: "no-store",
  });
  yield* chatEvents(res);
}
