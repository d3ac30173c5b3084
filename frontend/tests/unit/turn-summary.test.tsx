import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { StatusTimeline } from "@/components/status-timeline";
import { type StatusStep, applyChatEvent, applyStatus } from "@/lib/chat-turn";
import { liveLabel, sourcesPhrase, storedSteps, summaryLine } from "@/lib/turn-summary";
import type { Source, StatusEvent, Triage } from "@/lib/types";

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
    expect(sourcesPhrase({ sources, steps: [] })).toBe("3 passages from 2 documents");
    expect(sourcesPhrase({ sources: [source("S1", "a.md")], steps: [] })).toBe("1 passage from 1 document");
    expect(sourcesPhrase({ sources: [], steps: [] })).toBe("No documents used");
    expect(summaryLine({ sources, steps: [] }, "6.2 s")).toBe("3 passages from 2 documents · 6.2 s");
    expect(summaryLine({ steps: [] })).toBe("No documents used");
  });

  it("says an answer from the FAQ came from there, naming the FAQ entry's documents", () => {
    const faq = (sources: string[]): Triage => ({
      route: "faq",
      skip_llm: true,
      early_response: "",
      triage_log: [],
      faq: { id: "notice-period", matched: "What is the notice period?", score: 1, sources },
    });
    const steps = storedSteps(["triage_faq: Answered from the FAQ (notice-period)"]);
    expect(summaryLine({ steps, triage: faq(["employee-handbook.md"]) }, "0.3 s")).toBe(
      "Answered from the FAQ · employee-handbook.md · 0.3 s",
    );
    expect(sourcesPhrase({ steps, triage: faq(["a.md", "b.pdf"]) })).toBe("Answered from the FAQ · a.md, b.pdf");
    expect(sourcesPhrase({ steps, triage: faq([]) })).toBe("Answered from the FAQ");
    // it cites the passage of its document that states it, and still says it came from the FAQ
    const cited = [source("S1", "employee-handbook.md")];
    expect(sourcesPhrase({ sources: cited, steps, triage: faq(["employee-handbook.md"]) })).toBe(
      "Answered from the FAQ · employee-handbook.md",
    );
    const smallTalk = { route: "greeting", skip_llm: true, early_response: "Hi!", triage_log: [] };
    expect(sourcesPhrase({ steps: [], triage: smallTalk })).toBe("No documents used");
  });

  /** The steps a live page folds from these status events, and those a reload reads back from the stored lines. */
  const live = (events: StatusEvent[]) => events.reduce((steps, ev) => applyStatus(steps, ev, 1), [] as StatusStep[]);
  const searched: StatusEvent[] = [
    { node: "router", phase: "start", label: "Understanding question…", detail: null },
    { node: "router", phase: "end", label: "Understanding question", detail: "rag" },
    { node: "retriever", phase: "start", label: "Searching documents…", detail: null },
    { node: "retriever", phase: "end", label: "Searching documents", detail: "8 passages" },
    { node: "generator", phase: "start", label: "Writing answer…", detail: null },
  ];
  const reloaded = storedSteps([
    "router: Understanding question (rag)",
    "retriever: Searching documents (8 passages)",
    "generator: Writing answer",
  ]);

  it("says a stopped answer ended before its sources were listed and what the search had found, live and reloaded", () => {
    expect(summaryLine({ steps: live(searched), sources: [], cut: "stopped" }, "2.1 s")).toBe(
      "Stopped before sources were listed · 8 passages found · 2.1 s",
    );
    expect(summaryLine({ steps: reloaded, cut: "stopped" })).toBe(
      "Stopped before sources were listed · 8 passages found",
    );
    expect(sourcesPhrase({ steps: reloaded, cut: "interrupted" })).toBe(
      "Interrupted before sources were listed · 8 passages found",
    );
    const one = storedSteps(["retriever: Searching documents (1 passages; dropped 1 passage(s) that give …: x.md)"]);
    expect(sourcesPhrase({ steps: one, cut: "stopped" })).toBe("Stopped before sources were listed · 1 passage found");
  });

  it("says what the search found when the answer cites none of it, not 'No documents used' (tester)", () => {
    // the not-found reply names the closest passages but cites none
    expect(summaryLine({ steps: live(searched), sources: [] }, "3.5 s")).toBe("8 passages found · none cited · 3.5 s");
    expect(sourcesPhrase({ steps: reloaded, sources: [] })).toBe("8 passages found · none cited");
    // review: the not-found reply's passages come back uncited
    const uncited = [{ ...source("S1", "a.md"), cited: false }];
    expect(sourcesPhrase({ steps: reloaded, sources: uncited })).toBe("8 passages found · none cited");
    const none = storedSteps(["retriever: Searching documents (0 passages)"]);
    expect(sourcesPhrase({ steps: none, sources: [] })).toBe("The search found no passages");
    // tester: "why?" re-reads the last answer's passages and searches nothing new
    const reused = storedSteps(["retriever: Searching documents (0 passages, and 4 from earlier turns)"]);
    expect(sourcesPhrase({ steps: reused, sources: [] })).toBe("4 passages from earlier turns · none cited");
  });

  it("says how far a stopped answer got when the search had not ended, found nothing, or never ran", () => {
    const searching = live(searched.slice(0, 3));
    expect(sourcesPhrase({ steps: searching, cut: "stopped" })).toBe("Stopped while searching documents");
    expect(sourcesPhrase({ steps: storedSteps(["retriever: Searching a.md…"]), cut: "stopped" })).toBe(
      "Stopped while searching documents",
    );
    // a document named with brackets: the search had not ended, whatever the label's last words look like
    const bracketed = storedSteps(["retriever: Searching Budget (draft)…"]);
    expect(bracketed.map((s) => [s.label, s.detail, s.unfinished])).toEqual([
      ["Searching Budget (draft)…", null, true],
    ]);
    expect(sourcesPhrase({ steps: bracketed, cut: "interrupted" })).toBe("Interrupted while searching documents");
    const progressed: StatusEvent = {
      node: "retriever",
      phase: "progress",
      label: "Searching Budget (8).md…",
      detail: null,
    };
    const stopped = applyChatEvent(
      {
        key: "a",
        role: "assistant",
        content: "",
        state: "streaming",
        steps: live([...searched.slice(0, 3), progressed]),
      },
      { event: "stopped", data: { run_id: "r", answer: "", status: "stopped" } },
      9,
    );
    expect(stopped.steps?.find((s) => s.node === "retriever")?.unfinished).toBe(true);
    expect(sourcesPhrase({ steps: stopped.steps ?? [], cut: "stopped" })).toBe("Stopped while searching documents");
    // a row stored before unfinished steps were marked: a search without its passage count had not ended
    expect(sourcesPhrase({ steps: storedSteps(["retriever: Searching a.md"]), cut: "stopped" })).toBe(
      "Stopped while searching documents",
    );
    const nothing = storedSteps(["retriever: Searching documents (0 passages)"]);
    expect(sourcesPhrase({ steps: nothing, cut: "stopped" })).toBe("Stopped · the search found no passages");
    const chat = storedSteps(["router: Understanding question (chat: small talk)", "generator: Writing answer"]);
    expect(sourcesPhrase({ steps: chat, cut: "stopped" })).toBe("Stopped · no documents searched");
    // nothing known of its steps (stored before they were kept, or stopped before the first one)
    expect(sourcesPhrase({ steps: [], cut: "stopped" })).toBe("Stopped before sources were listed");
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
