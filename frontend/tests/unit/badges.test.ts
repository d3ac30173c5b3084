import { describe, expect, it } from "vitest";
import { badgesFromDone } from "@/lib/badges";

const done = { thread_id: "t", answer: "a", intent: "rag", rewritten_query: "q", route_reason: "asks about documents" };

describe("badgesFromDone", () => {
  it("shows the route, and triage and validation when present", () => {
    expect(badgesFromDone(done).map((b) => b.label)).toEqual(["from documents"]);
    const labels = badgesFromDone({
      ...done,
      triage: { route: "faq" },
      validation: { grounded: 0.923, pii_redacted: true },
    }).map((b) => b.label);
    expect(labels).toEqual(["from documents", "answered from FAQ", "grounded 0.92", "PII redacted"]);
  });

  it("is empty without a done event", () => {
    expect(badgesFromDone(undefined)).toEqual([]);
  });
});
