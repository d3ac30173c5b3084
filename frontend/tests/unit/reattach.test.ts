import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { REATTACH_POLICY, StreamEndedError, followAcrossRestarts, reattachDelay, serverNotBack } from "@/lib/reattach";
import { ApiError, type NumberedChatEvent, STALL_MS, StreamStalledError } from "@/lib/sse";

const encoder = new TextEncoder();
const RUN = "r1";

/** An SSE body of numbered frames, closed after them (a stream that ends, with or without a final event). */
function sse(frames: { id: number; event: string; data: object }[]): Response {
  const text = frames.map((f) => `id: ${f.id}\nevent: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`).join("");
  return new Response(encoder.encode(text), { status: 200, headers: { "content-type": "text/event-stream" } });
}

const stoppedInterrupted = (id: number) => ({
  id,
  event: "stopped",
  data: { run_id: RUN, status: "interrupted", answer: "Kept" },
});

/** The run's first stream: its metadata and two tokens, then the connection ends without a final event. */
async function* firstStream(): AsyncGenerator<NumberedChatEvent> {
  yield { event: "metadata", data: { run_id: RUN, thread_id: "t1" }, id: 1 } as NumberedChatEvent;
  yield { event: "token", data: { text: "Kep" }, id: 2 } as NumberedChatEvent;
  yield { event: "token", data: { text: "t text" }, id: 3 } as NumberedChatEvent;
}

/** A fetch that answers each re-attach with the next of `answers` (an Error is thrown, as fetch does offline). */
function fakeFetch(answers: (Response | Error | (() => Response))[]) {
  const calls: string[] = [];
  const impl = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    calls.push(String(url));
    if (init?.signal?.aborted) throw init.signal.reason;
    const next = answers.shift();
    if (next === undefined) throw new Error("no more answers scripted");
    if (next instanceof Error) throw next;
    return typeof next === "function" ? next() : next;
  });
  return { impl: impl as unknown as typeof fetch, calls };
}

/** An SSE body that sends `text` at once, then `pings` (": ping" every `everyMs`), then `last` and closes; with no
 * `last` it stays open and silent after its pings, as a connection that died without closing. */
function slow(text: string, options: { pings?: number; everyMs?: number; last?: string } = {}) {
  const state = { cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(text));
      let sent = 0;
      const timer = setInterval(() => {
        if (state.cancelled) return clearInterval(timer);
        if (sent < (options.pings ?? 0)) {
          sent += 1;
          controller.enqueue(encoder.encode(": ping\n\n"));
        } else {
          clearInterval(timer);
          if (options.last !== undefined) {
            controller.enqueue(encoder.encode(options.last));
            controller.close();
          }
        }
      }, options.everyMs ?? 15_000);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  const response = () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  return { response, state };
}

const frame = (f: { id: number; event: string; data: object }) =>
  `id: ${f.id}\nevent: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`;

const proxyError = (status: number) => () => Response.json({ detail: `backend not reachable (${status})` }, { status });

/** Run the follower to its end while fake time passes; its events, or what it threw. */
async function follow(
  fetchImpl: typeof fetch,
  options: { signal?: AbortSignal; onReconnecting?: (on: boolean) => void; stepMs?: number } = {},
): Promise<{ events: NumberedChatEvent[]; error?: unknown }> {
  const signal = options.signal ?? new AbortController().signal;
  const events: NumberedChatEvent[] = [];
  let error: unknown;
  let done = false;
  const run = (async () => {
    try {
      for await (const ev of followAcrossRestarts(firstStream(), {
        signal,
        fetchImpl,
        onReconnecting: options.onReconnecting,
      }))
        events.push(ev);
    } catch (err) {
      error = err;
    } finally {
      done = true;
    }
  })();
  for (let waited = 0; !done && waited < 10 * 60_000; waited += options.stepMs ?? 100) {
    await vi.advanceTimersByTimeAsync(options.stepMs ?? 100);
  }
  await run;
  return { events, error };
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe("reattachDelay", () => {
  it("re-attaches at once, then waits 0.5 s doubling up to 5 s", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map((n) => reattachDelay(n))).toEqual([
      0, 500, 1000, 2000, 4000, 5000, 5000, 5000,
    ]);
  });
});

describe("serverNotBack", () => {
  it("retries network failures and the proxy's 502/503/504, not a 404 or other 4xx, nor an abort", () => {
    expect(serverNotBack(new TypeError("Failed to fetch"))).toBe(true);
    expect(serverNotBack(new StreamStalledError(STALL_MS))).toBe(true);
    for (const status of [502, 503, 504]) expect(serverNotBack(new ApiError("down", status))).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 422, 500])
      expect(serverNotBack(new ApiError("no", status))).toBe(false);
    expect(serverNotBack(new DOMException("aborted", "AbortError"))).toBe(false);
  });
});

describe("followAcrossRestarts", () => {
  it("re-attaches after the last event seen through network failures and 502/503/504, until the run's end", async () => {
    const { impl, calls } = fakeFetch([
      new TypeError("Failed to fetch"),
      proxyError(502),
      proxyError(503),
      proxyError(504),
      () => sse([stoppedInterrupted(4)]),
    ]);
    const reconnecting: boolean[] = [];
    const { events, error } = await follow(impl, { onReconnecting: (on) => reconnecting.push(on) });
    expect(error).toBeUndefined();
    expect(calls).toEqual(Array(5).fill(`/api/runs/${RUN}/stream?after=3`));
    expect(events.map((e) => e.event)).toEqual(["metadata", "token", "token", "stopped"]);
    expect(events.at(-1)?.data).toMatchObject({ status: "interrupted", answer: "Kept" });
    expect(reconnecting).toEqual([true, false]);
  });

  it("waits longer between attempts while the server stays away", async () => {
    const started: number[] = [];
    const t0 = Date.now();
    const answers = [proxyError(502), proxyError(502), proxyError(502), proxyError(502), proxyError(502)];
    const impl = (async () => {
      started.push(Date.now() - t0);
      const next = answers.shift();
      return next ? next() : sse([stoppedInterrupted(4)]);
    }) as unknown as typeof fetch;
    const { error } = await follow(impl, { stepMs: 50 });
    expect(error).toBeUndefined();
    const gaps = started.slice(1).map((t, i) => t - started[i]);
    expect(gaps).toEqual([500, 1000, 2000, 4000, 5000]);
  });

  it("keeps the later position when a re-attach brought events before dropping again", async () => {
    const { impl, calls } = fakeFetch([
      () => sse([{ id: 4, event: "token", data: { text: "!" } }]),
      proxyError(502),
      () => sse([stoppedInterrupted(5)]),
    ]);
    const { events, error } = await follow(impl);
    expect(error).toBeUndefined();
    expect(calls).toEqual([3, 4, 4].map((n) => `/api/runs/${RUN}/stream?after=${n}`));
    expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
  });

  it("re-attaches when a stream goes silent past the keep-alive pings, closing it (a connection dead, not closed)", async () => {
    const silent = slow(frame({ id: 4, event: "token", data: { text: "!" } }), { pings: 2 });
    const { impl, calls } = fakeFetch([silent.response, () => sse([stoppedInterrupted(5)])]);
    const reconnecting: boolean[] = [];
    const t0 = Date.now();
    const { events, error } = await follow(impl, { onReconnecting: (on) => reconnecting.push(on) });
    expect(error).toBeUndefined();
    expect(calls).toEqual([3, 4].map((n) => `/api/runs/${RUN}/stream?after=${n}`));
    expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(reconnecting).toEqual([true, false, true, false]);
    expect(silent.state.cancelled).toBe(true);
    // lost 45 s after its last ping (two pings, 15 s apart)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2 * 15_000 + STALL_MS);
    expect(Date.now() - t0).toBeLessThan(2 * 15_000 + STALL_MS + 1_000);
  });

  it("keeps a stream that only pings for minutes (a long prompt read by the model), without re-attaching", async () => {
    const pinging = slow(frame({ id: 4, event: "status", data: { node: "generator", phase: "start", label: "…" } }), {
      pings: 12,
      last: frame(stoppedInterrupted(5)),
    });
    const { impl, calls } = fakeFetch([pinging.response]);
    const { events, error } = await follow(impl);
    expect(error).toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
  });

  it("gives up on a 404 for the run at once", async () => {
    const { impl, calls } = fakeFetch([proxyError(502), proxyError(404), () => sse([stoppedInterrupted(4)])]);
    const { error } = await follow(impl);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
    expect(calls).toHaveLength(2);
  });

  it("gives up with the last failure once the server has been away for the time limit", async () => {
    const { impl, calls } = fakeFetch(Array.from({ length: 100 }, () => proxyError(502)));
    const t0 = Date.now();
    const { error } = await follow(impl);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(502);
    const gaveUpAfter = Date.now() - t0;
    expect(gaveUpAfter).toBeLessThanOrEqual(REATTACH_POLICY.budgetMs + 200);
    expect(gaveUpAfter).toBeGreaterThan(REATTACH_POLICY.budgetMs - REATTACH_POLICY.maxDelayMs - 200);
    expect(calls.length).toBeGreaterThan(10);
    expect(calls.length).toBeLessThan(20);
  });

  it("gives up saying the stream ended when re-attaches keep closing without the run's end", async () => {
    const { impl } = fakeFetch(Array.from({ length: 100 }, () => () => sse([])));
    const { error } = await follow(impl);
    expect(error).toBeInstanceOf(StreamEndedError);
  });

  it("stops re-attaching when Stop aborts it, without another request", async () => {
    const { impl, calls } = fakeFetch(Array.from({ length: 100 }, () => proxyError(503)));
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 2_000); // during the wait after the third attempt (0, 0.5, 1.5 s)
    const t0 = Date.now();
    const { error } = await follow(impl, { signal: stop.signal });
    expect((error as DOMException).name).toBe("AbortError");
    expect(Date.now() - t0).toBeLessThan(2_200);
    expect(calls).toHaveLength(3);
  });

  it("does not re-attach when the run never started (no run id): the first failure is the answer", async () => {
    const { impl, calls } = fakeFetch([]);
    async function* refused(): AsyncGenerator<NumberedChatEvent> {
      throw new ApiError("backend not reachable", 502);
    }
    let error: unknown;
    try {
      for await (const _ of followAcrossRestarts(refused(), { signal: new AbortController().signal, fetchImpl: impl }));
    } catch (err) {
      error = err;
    }
    expect((error as ApiError).status).toBe(502);
    expect(calls).toHaveLength(0);
  });
});
