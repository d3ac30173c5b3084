import { describe, expect, it } from "vitest";
import { claimFor, evidenceView, holdsSnippet, sentences, supportingSpan } from "@/lib/evidence";
import type { DocumentText, Source } from "@/lib/types";

const source = (start: number, end: number): Source => ({
  id: "S2",
  document: "manual.pdf",
  page: 2,
  chunk: 0,
  snippet: "…",
  score: 0.5,
  doc_id: "d1",
  start,
  end,
});

describe("claimFor", () => {
  it("finds the answer sentence carrying the marker, also in a group, without markers", () => {
    const answer = "Leave is 25 days [S1]. Unused days carry over until March [S1, S2]. Ask HR.";
    expect(claimFor(answer, "S2")).toBe("Unused days carry over until March.");
    expect(claimFor(answer, "S1")).toBe("Leave is 25 days.");
    expect(claimFor(answer, "S3")).toBe("");
  });

  it("reads a marker written after the full stop as citing the sentence before it", () => {
    const answer = "The daily meal allowance abroad is 63 euros. [S1] Receipts are kept.[S2]";
    expect(claimFor(answer, "S1")).toBe("The daily meal allowance abroad is 63 euros.");
    expect(claimFor(answer, "S2")).toBe("Receipts are kept.");
    expect(claimFor("[S1]", "S1")).toBe("");
    // a sentence that cites its own passage keeps it; the marker opening the next one is that one's
    expect(claimFor("Leave is 25 days [S1]. [S2] says receipts are kept.", "S2")).toBe("says receipts are kept.");
    expect(claimFor("Leave is 25 days.\n\n[S1]", "S1")).toBe("Leave is 25 days.");
  });

  it("gives the sentence of the clicked marker when one source is cited twice (tester: every marker opened the first)", () => {
    const answer =
      "Bikes park in the covered rack [S2]. The four spaces by the entrance are for visitors [S2]. Badges [S1].";
    expect(claimFor(answer, "S2", 0)).toBe("Bikes park in the covered rack.");
    expect(claimFor(answer, "S2", 1)).toBe("The four spaces by the entrance are for visitors.");
    expect(claimFor(answer, "S2", 5)).toBe("Bikes park in the covered rack."); // fewer markers: the first
    expect(claimFor("Steps are approved. [S1] Trips abroad need finance [S1].", "S1", 1)).toBe(
      "Trips abroad need finance.",
    );
    // review: a sentence of markers only counts with the sentence before; a marker opening "[S4] states …" is its own
    expect(claimFor("Leave is 28 days [S1]. [S1]\n\nBadges are issued [S1].", "S1", 2)).toBe("Badges are issued.");
    expect(claimFor("The tools are listed. [S4] states that taxis are reimbursed.", "S4")).toBe(
      "states that taxis are reimbursed.",
    );
  });
});

describe("supportingSpan", () => {
  it("picks the passage sentence sharing the most words, numbers weighing double", () => {
    const passage = "Employees get 25 days of leave. Up to 5 unused days carry over to March. Badges are blue.";
    const span = supportingSpan(passage, "Five unused days carry over until March.")!;
    expect(passage.slice(span.start, span.end)).toBe("Up to 5 unused days carry over to March.");
    const days = supportingSpan(passage, "Staff have 25 days a year.")!;
    expect(passage.slice(days.start, days.end)).toBe("Employees get 25 days of leave.");
  });

  it("is null when no sentence shares a word", () => {
    expect(supportingSpan("Badges are blue.", "Refrigerant R-410A")).toBeNull();
  });
});

describe("sentences", () => {
  it("reads a line that carries on in lower case or with a number as the same sentence", () => {
    const pdf =
      "Per-diem amounts\nHotels up to 140 euros. In capital cities the limit is\n190 euros per night.\n- Taxis";
    expect(sentences(pdf).map((s) => s.text)).toEqual([
      "Per-diem amounts",
      "Hotels up to 140 euros.",
      "In capital cities the limit is\n190 euros per night.",
      "- Taxis",
    ]);
  });

  it("keeps offsets into the text", () => {
    const text = "One.  Two!\nThree";
    for (const s of sentences(text)) expect(text.slice(s.start, s.end)).toBe(s.text);
    expect(sentences(text).map((s) => s.text)).toEqual(["One.", "Two!", "Three"]);
  });
});

describe("evidenceView", () => {
  const page1 = "Cover page.\n";
  const page2 = "Warranty. The warranty lasts 24 months. Service yearly.\n";
  const doc: DocumentText = {
    id: "d1",
    name: "manual.pdf",
    type: "pdf",
    text: page1 + page2,
    pages: [
      { page: 1, start: 0, end: page1.length },
      { page: 2, start: page1.length, end: page1.length + page2.length },
    ],
  };

  it("shows a PDF's page with the passage and its supporting sentence", () => {
    const start = doc.text.indexOf("The warranty");
    const view = evidenceView(doc, source(start, doc.text.length - 1), "It is covered for 24 months.")!;
    expect(view.page).toBe(2);
    expect(view.before).toBe("Warranty. ");
    expect(view.support).toBe("The warranty lasts 24 months.");
    expect(view.passageAfter).toBe(" Service yearly.");
    expect(view.before + view.passageBefore + view.support + view.passageAfter + view.after).toBe(page2);
  });

  it("names the page of the supporting sentence when the passage starts on the page before", () => {
    const view = evidenceView(doc, source(0, doc.text.length), "The warranty lasts 24 months.")!;
    expect(view.page).toBe(2);
    expect(view.support).toBe("The warranty lasts 24 months.");
    expect(view.passageBefore).toBe(page1 + "Warranty. ");
  });

  it("opens a PDF at the source's page when no sentence of the passage shares a word with the claim", () => {
    const view = evidenceView(doc, source(0, doc.text.length), "")!;
    expect(view.page).toBe(2); // the page the sources card names, not the passage's first
    expect(view.support).toBe(doc.text);
  });

  it("shows a text document whole, and nothing for a span outside the text", () => {
    const text: DocumentText = { id: "d1", name: "a.md", type: "md", text: "Intro. Leave is 25 days. End." };
    const view = evidenceView(text, source(7, 24), "25 days of leave")!;
    expect(view.page).toBeNull();
    expect(view.before).toBe("Intro. ");
    expect(view.support).toBe("Leave is 25 days.");
    expect(view.after).toBe(" End.");
    expect(evidenceView(text, source(7, 999), "x")).toBeNull();
    expect(evidenceView(text, { ...source(0, 1), start: undefined }, "x")).toBeNull();
  });
});

describe("holdsSnippet", () => {
  it("finds a source's snippet in its span, whitespace aside, and not in a replaced file's other text", () => {
    const passage = "Expenses\n\nReceipts must be  kept for ten years.";
    expect(holdsSnippet(passage, "Expenses Receipts must be kept for…")).toBe(true);
    expect(holdsSnippet("Mileage is paid at 0.38 euros per km.", "Expenses Receipts must be kept for…")).toBe(false);
    expect(holdsSnippet("anything", "…")).toBe(true); // no snippet to check
  });

  it("makes evidenceView decline a span that now holds another passage", () => {
    const doc: DocumentText = { id: "d1", name: "a.md", type: "md", text: "Intro. Leave is 30 days. End." };
    const moved = { ...source(7, 24), snippet: "Leave is 25 days." };
    expect(evidenceView(doc, moved, "25 days of leave")).toBeNull(); // the tester's viewer highlighted it
  });
});
