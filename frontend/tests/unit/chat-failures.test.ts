import { describe, expect, it } from "vitest";
import { MISSING_THREAD, afterLoadFailure, askedOnMissingThread, stopLeftToPage } from "@/lib/chat-failures";
import { ApiError } from "@/lib/sse";

const notFound = new ApiError("thread 't1' does not exist; GET /api/threads lists the threads", 404);

describe("a thread that could not be loaded", () => {
  it("is left when it does not exist for this user, so the next question starts a new conversation", () => {
    expect(afterLoadFailure("t1", notFound)).toEqual({ notice: MISSING_THREAD, threadId: null });
  });

  it("says so in words, without the API's developer text", () => {
    const { notice } = afterLoadFailure("t1", notFound);
    expect(notice).toContain("Ask something to start a new conversation");
    expect(notice).not.toMatch(/GET \/api|http_404|t1/);
  });

  it("is kept when the failure was the server's, where asking on it may work", () => {
    const down = afterLoadFailure("t1", new ApiError("Cannot reach the Ragline server", 0));
    expect(down.threadId).toBe("t1");
    expect(down.notice).toBe("Could not load this conversation: Cannot reach the Ragline server");
    expect(afterLoadFailure("t1", new ApiError("boom", 500)).threadId).toBe("t1");
    expect(afterLoadFailure("t1", new TypeError("Failed to fetch")).threadId).toBe("t1");
  });
});

describe("a question refused", () => {
  it("with a 404 before its run started was asked on a thread that is not this user's", () => {
    expect(askedOnMissingThread(notFound, false)).toBe(true);
  });

  it("is an ordinary failure otherwise: another status, a network drop, or a run's log gone after it started", () => {
    expect(askedOnMissingThread(new ApiError("message is too long", 413), false)).toBe(false);
    expect(askedOnMissingThread(new TypeError("network"), false)).toBe(false);
    expect(askedOnMissingThread(new ApiError("run 'r1' does not exist", 404), true)).toBe(false);
  });
});

describe("a Stop the server refused", () => {
  it("leaves the answer to end as it did when the run had already finished (409)", () => {
    const finished = new ApiError("run 'r1' has already finished (completed); there is nothing to stop", 409);
    expect(stopLeftToPage(finished)).toBe(false);
  });

  it("makes the page stop following when the server could not be told", () => {
    expect(stopLeftToPage(new ApiError("The Ragline backend is not reachable", 502))).toBe(true);
    expect(stopLeftToPage(new TypeError("fetch failed"))).toBe(true);
  });
});
