import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { StatusTimeline } from "@/components/status-timeline";
import type { StatusStep } from "@/lib/chat-turn";
import { liveLabel, sourcesPhrase, storedSteps, summaryLine } from "@/lib/turn-summary";
import type { Source } from "@/lib/types";

const step = (node: string, label: string, endedAt?: number): StatusStep => ({
  node,
  label,
  detail: null,
  startedAt: 0,
  ...(endedAt !== undefined ? { endedAt } : {}),
});
const source = (id: string, document: string): Source => ({
  id,
  document,
  page: null,
  chunk: 0,
  snippet: "",
  score: 1,
});

describe("the live line", () => {
  it("says what is happening now: the latest open step's label", () => {
    const steps = [step("router", "Understanding question…", 1), step("retriever", "Searching employee-handbook.md…")];
    expect(liveLabel(steps, "")).toBe("Searching employee-handbook.md…");
    expect(liveLabel([step("generator", "Waiting for the model: 1 ahead")], "")).toBe("Waiting for the model: 1 ahead");
    expect(liveLabel([], "")).toBe("Connecting…");
  });

  it("says Writing… once the answer's text arrives, then the checks after it, Finishing… between them", () => {
    expect(liveLabel([step("generator", "Writing answer…")], "According")).toBe("Writing…");
    const checking = [step("generator", "Writing answer…", 3), step("validate_sources", "Checking the answer…")];
    expect(liveLabel(checking, "According to the documents")).toBe("Checking the answer…");
    const between = [step("generator", "Writing answer…", 3), step("validate_sources", "Checking the answer…", 4)];
    expect(liveLabel(between, "According to the documents")).toBe("Finishing…");
    expect(liveLabel([step("triage_faq", "Looking in the FAQ", 2)], "The FAQ says")).toBe("Writing…");
  });

  it("renders as one line, with no list of steps", () => {
    const steps = [step("router", "Understanding question…", 1), step("retriever", "Searching Policy.pdf…")];
    const html = renderToStaticMarkup(<StatusTimeline steps={steps} running content="" startedAt={Date.now()} />);
    expect(html).toContain("Searching Policy.pdf…");
    expect(html).not.toContain("Understanding question");
    expect(html).not.toContain("<ol");
    expect(html).toMatch(/\d\.\d s/);
  });
});

describe("the summary of an ended turn", () => {
  it("counts passages and distinct documents", () => {
    const sources = [source("S1", "a.md"), source("S2", "b.pdf"), source("S3", "a.md")];
    expect(sourcesPhrase(sources)).toBe("3 passages from 2 documents");
    expect(sourcesPhrase([source("S1", "a.md")])).toBe("1 passage from 1 document");
    expect(sourcesPhrase([])).toBe("No documents used");
    expect(summaryLine(sources, "6.2 s")).toBe("3 passages from 2 documents · 6.2 s");
    expect(summaryLine(undefined)).toBe("No documents used");
  });

  it("is a collapsed disclosure button: the steps are not shown until it is pressed", () => {
    const steps = [step("router", "Understanding question…", 1), step("generator", "Writing answer…", 5)];
    const html = renderToStaticMarkup(
      <StatusTimeline
        steps={steps}
        running={false}
        content="x"
        sources={[source("S1", "a.md")]}
        startedAt={0}
        endedAt={6200}
      />,
    );
    expect(html).toMatch(/<button[^>]*aria-expanded="false"[^>]*>.*1 passage from 1 document · 6\.2 s<\/button>/);
    expect(html).not.toContain("<ol");
  });

  it("reads a stored turn's steps back as timeline steps", () => {
    const steps = storedSteps([
      "router: Understanding question (chat: knowledge base is empty)",
      "triage_intent: Small talk (greeting)",
      "generator: Writing answer",
      "odd line",
    ]);
    expect(steps.map((s) => [s.node, s.label, s.detail])).toEqual([
      ["router", "Understanding question", "chat: knowledge base is empty"],
      ["triage_intent", "Small talk", "greeting"],
      ["generator", "Writing answer", null],
      ["", "odd line", null],
    ]);
    expect(storedSteps(null)).toEqual([]);
  });
});
