import { describe, expect, it } from "vitest";
import { badgesFromDone } from "@/lib/badges";

const done = { thread_id: "t", answer: "a", intent: "rag", rewritten_query: "q", route_reason: "asks about documents" };

describe("badgesFromDone", () => {
  it("shows the route, and triage and validation when present", () => {
    expect(badgesFromDone(done).map((b) => b.label)).toEqual(["from documents"]);
    const labels = badgesFromDone({
      ...done,
      triage: { route: "faq", skip_llm: true, triage_log: [] },
      validation: {
        sources: { grounded: true, confidence: 0.923 },
        input: { action: "redact", categories: ["pii:email"] },
        output_guardrail: { safe: false, issues: ["unknown_url:x.example"] },
      },
    }).map((b) => b.label);
    expect(labels).toEqual(["from documents", "answered from FAQ", "grounded 0.92", "PII redacted", "answer adjusted"]);
  });

  it("shows nothing for an empty triage route or a clean validation", () => {
    const labels = badgesFromDone({
      ...done,
      triage: { route: "", skip_llm: false },
      validation: { input: { action: "pass", categories: [] }, output_guardrail: { safe: true, issues: [] } },
    }).map((b) => b.label);
    expect(labels).toEqual(["from documents"]);
  });

  it("is empty without a done event", () => {
    expect(badgesFromDone(undefined)).toEqual([]);
  });
});
