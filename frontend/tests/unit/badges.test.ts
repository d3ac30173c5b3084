import { describe, expect, it } from "vitest";
import { badgesFromDone, searched } from "@/lib/badges";
import type { DoneEvent } from "@/lib/types";

const done: DoneEvent = {
  thread_id: "t",
  question: "q?",
  answer: "a",
  intent: "rag",
  rewritten_query: "q",
  route_reason: "asks about documents",
  scope: null,
  triage: null,
  validation: null,
  usage: null,
};
const check = { reason: "", scores: {} };

describe("badgesFromDone", () => {
  it("shows the route, and triage and validation when present", () => {
    expect(badgesFromDone(done).map((b) => b.label)).toEqual(["searched the documents"]);
    const labels = badgesFromDone({
      ...done,
      triage: { route: "faq", skip_llm: true, early_response: "From the FAQ.", triage_log: [] },
      validation: {
        sources: { grounded: true, confidence: 0.923, issues: [], unsupported_sentences: [] },
        input: { action: "redact", categories: ["pii:email"], ...check },
        output_guardrail: { safe: false, issues: ["unknown_url:x.example"], original_text: "a" },
      },
    }).map((b) => b.label);
    // the FAQ answered: no route was taken, so no route badge
    expect(labels).toEqual(["answered from FAQ", "grounded 0.92", "PII redacted", "answer adjusted"]);
  });

  it("says an answer stopped at its length limit, as the server judges the answer shown", () => {
    const sources = { grounded: true, confidence: 0.94, issues: [], unsupported_sentences: [] };
    const cut = badgesFromDone({
      ...done,
      validation: { sources, length: { cut: true, max_tokens: 512 } },
    }).find((b) => b.label === "cut short");
    expect(cut?.tone).toBe("warn");
    expect(cut?.title).toContain("length limit (512 tokens)");
    // the not-found reply that replaced a cut answer is whole: the server says cut false
    const replaced = badgesFromDone({
      ...done,
      validation: { sources: { ...sources, not_found: "replaced" }, length: { cut: false, max_tokens: 512 } },
    }).map((b) => b.label);
    expect(replaced).not.toContain("cut short");
  });

  it("explains every triage badge in its tooltip (tester: the FAQ badge had none)", () => {
    for (const route of ["faq", "blocked", "off_topic", "mention", "greeting", "thanks"]) {
      const [badge] = badgesFromDone({
        ...done,
        triage: { route, skip_llm: true, early_response: "", triage_log: [] },
      });
      expect(badge.title, route).toMatch(/\w{4,}.*\./);
    }
  });

  it("tells an @mention matching several documents from one matching none", () => {
    // the router's notes, word for word (backend/rag/mentions.py Resolution.notes, graph/nodes/router.py _targeted)
    const ambiguous = '"@expense-rules" matches several documents: expense-rules.md, expense-rules.txt';
    const unknown = 'No document matches "@expenses-2019"';
    const check = "Check the name, or type @ to pick from the document list.";
    const mention = (...notes: string[]) =>
      badgesFromDone({
        ...done,
        route_reason: notes[0],
        triage: { route: "mention", skip_llm: true, early_response: `${notes.join(". ")}. ${check}`, triage_log: [] },
      });
    // tester: the note said two documents match, the badge said "unknown document"
    expect(mention(ambiguous).map((b) => b.label)).toEqual(["ambiguous document"]);
    expect(mention(ambiguous)[0].title).toMatch(/more than one document/);
    expect(mention(unknown).map((b) => b.label)).toEqual(["unknown document"]);
    expect(mention(ambiguous, unknown).map((b) => b.label)).toEqual(["unknown or ambiguous document"]);
    // the reply alone says it too (a stored turn without its route_reason)
    const reply = { route: "mention", skip_llm: true, early_response: `${ambiguous}. ${check}`, triage_log: [] };
    expect(badgesFromDone({ ...done, route_reason: null, triage: reply }).map((b) => b.label)).toEqual([
      "ambiguous document",
    ]);
  });

  it("shows nothing for an empty triage route or a clean validation", () => {
    const labels = badgesFromDone({
      ...done,
      triage: { route: "", skip_llm: false, early_response: "", triage_log: [] },
      validation: {
        input: { action: "pass", categories: [], ...check },
        output_guardrail: { safe: true, issues: [], original_text: "a" },
      },
    }).map((b) => b.label);
    expect(labels).toEqual(["searched the documents"]);
  });

  it("counts unsupported claims, also from what a reloaded turn stored", () => {
    const sources = {
      grounded: false,
      confidence: 0.4,
      issues: [],
      unsupported_sentences: ["A.", "B."],
      unsupported: [
        { text: "A.", start: 0, end: 2 },
        { text: "B.", start: 3, end: 5 },
      ],
    };
    const live = badgesFromDone({ ...done, validation: { sources } });
    expect(live.find((b) => b.tone === "warn" && b.label.includes("not in the sources"))?.label).toBe(
      "2 claims not in the sources",
    );
    const stored = badgesFromDone({
      intent: "rag",
      validation: { sources: { ...sources, unsupported: [sources.unsupported[0]] } },
    });
    expect(stored.map((b) => b.label)).toEqual([
      "searched the documents",
      "1 claim not in the sources",
      "grounded 0.40",
    ]);
  });

  it("says the documents do not contain the answer, and why, instead of the replaced text's grounding", () => {
    const sources = { grounded: true, confidence: 0.79, issues: [], unsupported_sentences: [] };
    const replaced = badgesFromDone({
      ...done,
      validation: {
        sources: {
          ...sources,
          not_found: "replaced",
          not_found_reason: "unstated_premise",
          unstated: ["new", "price", "purchase"],
        },
      },
    });
    expect(replaced.map((b) => b.label)).toEqual(["searched the documents", "not in the documents"]);
    expect(replaced[1].title).toContain("question's words (new, price, purchase) where no passage does");
    const wrongKind = badgesFromDone({
      ...done,
      validation: {
        sources: { ...sources, not_found: "replaced", not_found_reason: "wrong_kind", asked_for: "a frequency" },
      },
    });
    expect(wrongKind[1].title).toContain("asks for a frequency");
    const echo = badgesFromDone({
      ...done,
      validation: { sources: { ...sources, not_found: "replaced", not_found_reason: "restates_question" } },
    });
    expect(echo[1].title).toBe("The model's answer only restated the question, so it was replaced.");
    const model = badgesFromDone({ ...done, validation: { sources: { ...sources, not_found: "model" } } });
    expect(model.map((b) => b.label)).toEqual(["searched the documents", "not in the documents"]);
    expect(model[1].title).toBe("The model found no answer in the passages.");
    const none = badgesFromDone({
      ...done,
      validation: { sources: { ...sources, grounded: false, confidence: 0, not_found: "no_passages" } },
    });
    expect(none.map((b) => b.label)).toEqual(["searched the documents", "not in the documents"]);
    expect(none[1].title).toContain("No passage matched the question");
  });

  it("says when another document gives a different figure for something similar", () => {
    const conflict = { sentence: "0.30 euros per kilometre [S1].", cited: "S1", source: "S2", says: "0.42 euros" };
    const sources = { grounded: true, confidence: 0.9, issues: [], unsupported_sentences: [], conflicts: [conflict] };
    const badges = badgesFromDone({ ...done, validation: { sources } });
    expect(badges.map((b) => b.label)).toEqual([
      "searched the documents",
      "grounded 0.90",
      "different figure elsewhere",
    ]);
    expect(badges[2].title).toContain("(S2): the answer's last paragraph quotes it; check which applies.");
    const agreed = { ...sources, conflicts: [] };
    expect(badgesFromDone({ ...done, validation: { sources: agreed } }).map((b) => b.label)).not.toContain(
      "different figure elsewhere",
    );
  });

  it("is empty without a done event", () => {
    expect(badgesFromDone(undefined)).toEqual([]);
  });
});

describe("the grounding score", () => {
  it("is not shown for an answer that states nothing (0 claims), as 'grounded 1.00' was", () => {
    const sources = { grounded: true, confidence: 1, issues: [], unsupported_sentences: [], claims: 0, supported: 0 };
    const labels = badgesFromDone({ ...done, validation: { sources } }).map((b) => b.label);
    expect(labels).toEqual(["searched the documents"]);
    const stated = { ...sources, claims: 2, supported: 2 };
    expect(badgesFromDone({ ...done, validation: { sources: stated } }).map((b) => b.label)).toContain("grounded 1.00");
  });
});

describe("searched", () => {
  it("names the documents a scoped search was limited to, and says when a follow-up kept them", () => {
    expect(searched(null)).toBe("searched the documents");
    expect(searched({ documents: [], source: "mention" })).toBe("searched the documents");
    expect(searched({ documents: ["a.md"], source: "mention" })).toBe("searched only a.md");
    expect(searched({ documents: ["a.md", "b.pdf"], source: "carried" })).toBe(
      "searched only a.md and b.pdf (follow-up)",
    );
    expect(searched({ documents: ["a.md", "b.pdf", "c.txt"], source: "mention" })).toBe("searched only 3 documents");
  });

  it("is the route badge of a scoped documents answer", () => {
    const scoped = { ...done, scope: { documents: ["a.md"], source: "mention" as const } };
    expect(badgesFromDone(scoped)[0]).toMatchObject({ label: "searched only a.md", title: "asks about documents" });
  });
});
