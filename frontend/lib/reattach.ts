/**
 * Following a run across dropped connections and server restarts: when its stream ends without a final event, or
 * the connection fails, re-attach after the last event seen, with backoff, until the server is back.
 */
import { ApiError, type NumberedChatEvent, followRun } from "./sse";

/**
 * The first re-attach is at once (a dropped connection to a running server comes back on it); then 0.5 s doubling
 * to 5 s, so that a server back after a restart is found within 5 s; given up 60 s after the connection was lost,
 * long enough for a restart that loads a local model, short enough not to leave an answer spinning for minutes.
 */
export const REATTACH_POLICY = { firstDelayMs: 500, maxDelayMs: 5_000, budgetMs: 60_000 };
export type ReattachPolicy = typeof REATTACH_POLICY;

/** The stream closed before its run's final event, and no re-attach brought it back. */
export class StreamEndedError extends Error {
  constructor() {
    super("The stream ended before the answer finished (network drop?).");
    this.name = "StreamEndedError";
  }
}

/**
 * Whether a failed re-attach means "the server is not back yet": no answer at all (a network failure, or a stream
 * silent past its keep-alive pings: StreamStalledError), or the UI's proxy saying the backend does not answer (502;
 * 503 and 504 from a proxy in front). Any other HTTP error is final: a 404 means the run is gone.
 */
export function serverNotBack(err: unknown): boolean {
  if (err instanceof ApiError) return err.status === 502 || err.status === 503 || err.status === 504;
  return !(err instanceof DOMException && err.name === "AbortError");
}

/** The wait before re-attach number `failures` (0 for the first after the connection was lost). */
export function reattachDelay(failures: number, policy: ReattachPolicy = REATTACH_POLICY): number {
  if (failures === 0) return 0;
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** (failures - 1));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

const isFinal = (ev: NumberedChatEvent) => ev.event === "done" || ev.event === "error" || ev.event === "stopped";

export interface FollowOptions {
  /** Aborted by Stop or by leaving the thread: ends the waits and the fetches at once. */
  signal: AbortSignal;
  /** The run, when known before its first event (a thread opened while it runs); else read from `metadata`. */
  run?: { id: string; lastId: number };
  /** True when the connection is lost and re-attaching starts, false when events arrive again. */
  onReconnecting?: (reconnecting: boolean) => void;
  policy?: ReattachPolicy;
  fetchImpl?: typeof fetch;
}

/**
 * The events of a run, from `first` (the POST that started it, or a first re-attach) until its final event,
 * re-attaching after the last event id seen whenever the stream ends early. Throws what `first` throws before the
 * run is known, a final HTTP error of a re-attach (see `serverNotBack`), and the last failure once the policy's
 * budget is spent (StreamEndedError when the stream had closed cleanly).
 */
export async function* followAcrossRestarts(
  first: AsyncGenerator<NumberedChatEvent>,
  options: FollowOptions,
): AsyncGenerator<NumberedChatEvent> {
  const { signal, onReconnecting, policy = REATTACH_POLICY, fetchImpl } = options;
  let run = options.run ? { ...options.run } : null;
  let source = first;
  let lostAt: number | null = null; // when the connection was lost; null while events flow
  let failures = 0;
  for (;;) {
    let failure: unknown;
    try {
      for await (const ev of source) {
        if (lostAt !== null) {
          lostAt = null;
          failures = 0;
          onReconnecting?.(false);
        }
        if (ev.event === "metadata") run = { id: ev.data.run_id, lastId: ev.id ?? 0 };
        else if (ev.id !== undefined && run) run.lastId = ev.id;
        yield ev;
        if (isFinal(ev)) return;
      }
      failure = new StreamEndedError();
    } catch (err) {
      if (signal.aborted || !run || !serverNotBack(err)) throw err;
      failure = err;
    }
    if (signal.aborted) throw signal.reason;
    if (!run) throw failure; // no run id yet: nothing to re-attach to
    const now = Date.now();
    if (lostAt === null) {
      lostAt = now;
      onReconnecting?.(true);
    }
    const delay = reattachDelay(failures++, policy);
    if (now + delay - lostAt > policy.budgetMs) throw failure;
    await sleep(delay, signal);
    source = followRun(run.id, run.lastId, signal, fetchImpl);
  }
}
