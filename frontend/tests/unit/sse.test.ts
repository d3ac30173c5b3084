import { describe, expect, it } from "vitest";
import { ApiError, SseParser, followRun, readSse, streamChat, toChatEvent } from "@/lib/sse";

const encoder = new TextEncoder();

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(typeof c === "string" ? encoder.encode(c) : c);
      controller.close();
    },
  });
}

async function collect<T>(gen: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

describe("SseParser", () => {
  it("parses one complete frame", () => {
    const p = new SseParser();
    expect(p.push('event: token\ndata: {"text":"Hi"}\n\n')).toEqual([{ event: "token", data: '{"text":"Hi"}' }]);
  });

  it("reassembles frames split at every possible position", () => {
    const wire = 'event: status\r\ndata: {"node":"router"}\r\n\r\nevent: token\r\ndata: {"text":"a b"}\r\n\r\n';
    for (let cut = 1; cut < wire.length; cut++) {
      const p = new SseParser();
      const frames = [...p.push(wire.slice(0, cut)), ...p.push(wire.slice(cut)), ...p.end()];
      expect(frames, `cut at ${cut}`).toEqual([
        { event: "status", data: '{"node":"router"}' },
        { event: "token", data: '{"text":"a b"}' },
      ]);
    }
  });

  it("feeds byte by byte", () => {
    const p = new SseParser();
    const frames = [..."event: done\ndata: {}\n\n"].flatMap((c) => p.push(c));
    expect(frames).toEqual([{ event: "done", data: "{}" }]);
  });

  it("joins multi-line data with newlines", () => {
    const p = new SseParser();
    expect(p.push("event: token\ndata: line one\ndata: line two\ndata:\ndata:  indented\n\n")).toEqual([
      { event: "token", data: "line one\nline two\n\n indented" },
    ]);
  });

  it("ignores comment lines such as the heartbeat ping", () => {
    const p = new SseParser();
    const frames = p.push(": ping - 2026-01-01 00:00:00\r\n\r\nevent: token\r\n: ping\r\ndata: x\r\n\r\n");
    expect(frames).toEqual([{ event: "token", data: "x" }]);
  });

  it("defaults the event name to message and keeps ids", () => {
    const p = new SseParser();
    expect(p.push("id: 7\ndata: hello\n\n")).toEqual([{ event: "message", data: "hello", id: "7" }]);
  });

  it("handles lone CR line ends and a field without a colon", () => {
    const p = new SseParser();
    expect(p.push("event: done\rdata\r\revent: x")).toEqual([{ event: "done", data: "" }]);
  });

  it("dispatches a final frame without the trailing blank line at end of stream", () => {
    const p = new SseParser();
    expect(p.push("event: done\ndata: {}")).toEqual([]);
    expect(p.end()).toEqual([{ event: "done", data: "{}" }]);
  });

  it("drops a blank-line-only stream and an event line without data", () => {
    const p = new SseParser();
    expect(p.push("\n\nevent: token\n\n")).toEqual([]);
  });
});

describe("readSse", () => {
  it("decodes UTF-8 characters split across chunks", async () => {
    const bytes = encoder.encode('event: token\ndata: {"text":"Grüße €"}\n\n');
    const split = bytes.indexOf(0xe2) + 1; // inside the 3-byte euro sign
    const frames = await collect(readSse(streamOf([bytes.slice(0, split), bytes.slice(split)])));
    expect(frames).toEqual([{ event: "token", data: '{"text":"Grüße €"}' }]);
  });
});

describe("toChatEvent", () => {
  it("types known events and skips unknown or malformed ones", () => {
    expect(toChatEvent({ event: "token", data: '{"text":"a"}' })).toEqual({ event: "token", data: { text: "a" } });
    expect(toChatEvent({ event: "mystery", data: "{}" })).toBeNull();
    expect(toChatEvent({ event: "token", data: "{not json" })).toBeNull();
  });
});

describe("streamChat", () => {
  it("posts the request and yields typed events in order", async () => {
    const wire = [
      'event: metadata\r\ndata: {"thread_id":"t1","run_id":"r1"}\r\n\r\n: ping\r\n\r\nevent: sta',
      'tus\r\ndata: {"node":"router","phase":"start","label":"Understanding question…","detail":null}\r\n\r\n',
      'event: token\r\ndata: {"text":"Hello "}\r\n\r\nevent: token\r\ndata: {"text":"[S1]"}\r\n\r\n',
      'event: done\r\ndata: {"thread_id":"t1","answer":"Hello [S1]","intent":"rag","rewritten_query":"q"}\r\n\r\n',
    ];
    let sent: { url: string; init?: RequestInit } | undefined;
    const fakeFetch = (async (url: string, init?: RequestInit) => {
      sent = { url, init };
      return new Response(streamOf(wire), { headers: { "content-type": "text/event-stream" } });
    }) as typeof fetch;
    const events = await collect(streamChat({ message: "hi", thread_id: null, mode: "auto" }, undefined, fakeFetch));
    expect(sent?.url).toBe("/api/chat/stream");
    expect(JSON.parse(String(sent?.init?.body))).toEqual({ message: "hi", thread_id: null, mode: "auto" });
    expect(events.map((e) => e.event)).toEqual(["metadata", "status", "token", "token", "done"]);
    expect(events[3]).toEqual({ event: "token", data: { text: "[S1]" } });
  });

  it("throws ApiError with the server's detail on a 4xx answer", async () => {
    const fakeFetch = (async () =>
      Response.json({ detail: "message is 20000 characters; the limit is 16000" }, { status: 413 })) as typeof fetch;
    const run = collect(streamChat({ message: "x".repeat(20000) }, undefined, fakeFetch));
    await expect(run).rejects.toBeInstanceOf(ApiError);
    await expect(collect(streamChat({ message: "x" }, undefined, fakeFetch))).rejects.toThrow(/limit is 16000/);
  });
});

describe("followRun", () => {
  it("asks for the events after the last one seen and yields them with their numbers", async () => {
    const wire = [
      'id: 4\nevent: token\ndata: {"text":"sea "}\n\nid: 5\nevent: stopped\n',
      'data: {"run_id":"r1","status":"stopped","answer":"The sea "}\n\n',
    ];
    let url = "";
    const fakeFetch = (async (u: string) => {
      url = u;
      return new Response(streamOf(wire), { headers: { "content-type": "text/event-stream" } });
    }) as typeof fetch;
    const events = await collect(followRun("r 1", 3, undefined, fakeFetch));
    expect(url).toBe("/api/runs/r%201/stream?after=3");
    expect(events).toEqual([
      { event: "token", data: { text: "sea " }, id: 4 },
      { event: "stopped", data: { run_id: "r1", status: "stopped", answer: "The sea " }, id: 5 },
    ]);
  });

  it("throws ApiError with the server's detail for an unknown run", async () => {
    const fakeFetch = (async () =>
      Response.json({ detail: "run 'x' does not exist" }, { status: 404 })) as typeof fetch;
    await expect(collect(followRun("x", 0, undefined, fakeFetch))).rejects.toThrow(/does not exist/);
  });
});

describe("a call the server never answers", () => {
  it("says the server cannot be reached instead of the browser's 'Failed to fetch'", async () => {
    const { call, UNREACHABLE } = await import("@/lib/api");
    const real = globalThis.fetch;
    globalThis.fetch = (() => Promise.reject(new TypeError("Failed to fetch"))) as typeof fetch;
    try {
      const err = await call("/api/threads").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as Error).message).toBe(UNREACHABLE);
    } finally {
      globalThis.fetch = real;
    }
  });
});
