/** What one line says about a turn: what is happening now while it runs, and a summary once it has ended. */
import type { StatusStep } from "./chat-turn";
import type { Source, Triage } from "./types";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * The live line of a running turn: the latest status label of a step still open ("Searching employee-handbook.md…",
 * "Waiting for the model: 1 ahead"), "Writing…" once the answer's text is arriving, "Finishing…" between the checks
 * that follow it.
 */
export function liveLabel(steps: StatusStep[], content: string): string {
  const open = steps.findLast((s) => s.endedAt === undefined);
  if (open && !(content && open.node === "generator")) return open.label;
  if (!content) return "Connecting…";
  const written = steps.some((s) => s.node === "generator" && s.endedAt !== undefined);
  return written && !open ? "Finishing…" : "Writing…";
}

/** What the summary of an ended turn is made from: what a live page saw, or what a reloaded one read back. */
export interface EndedTurn {
  sources?: Source[];
  steps: StatusStep[];
  triage?: Triage | null;
  /** The turn ended without its whole answer: Stop, or a server restart. */
  cut?: "stopped" | "interrupted";
}

/** "8 passages" from the retriever's detail ("8 passages; dropped 1 passage(s) …"); null when it has none. */
function passagesFound(step: StatusStep): number | null {
  const m = /^(\d+) passages?\b/.exec(step.detail ?? "");
  return m ? Number(m[1]) : null;
}

/** "4" from the retriever's detail "0 passages, and 4 from earlier turns": passages carried from earlier turns. */
function passagesCarried(step: StatusStep): number {
  const m = /, and (\d+) from earlier turns\b/.exec(step.detail ?? "");
  return m ? Number(m[1]) : 0;
}

/** What a search with results found: "8 passages found", or "documents searched" when its step gives no count. */
function foundPhrase(found: number | null): string {
  return found === null ? "documents searched" : `${plural(found, "passage", "passages")} found`;
}

/**
 * A cut-short turn never lists its sources (they come with the end of the answer), so it says how far it got: the
 * retriever's step tells whether the documents were searched and what the search found.
 */
function cutPhrase(cut: "stopped" | "interrupted", steps: StatusStep[]): string {
  const verb = cut === "stopped" ? "Stopped" : "Interrupted";
  const search = steps.findLast((s) => s.node === "retriever");
  if (!search && steps.length === 0) return `${verb} before sources were listed`; // nothing known of how far it got
  if (!search) return `${verb} · no documents searched`;
  // the retriever had not ended (a row stored before unfinished steps were marked: it has no detail yet)
  if (search.unfinished || !search.detail) return `${verb} while searching documents`;
  const found = passagesFound(search);
  if (found === 0) return `${verb} · the search found no passages`;
  return `${verb} before sources were listed · ${foundPhrase(found)}`;
}

/**
 * Where an ended turn's answer came from: "3 passages from 2 documents" (distinct documents); "Answered from the
 * FAQ · employee-handbook.md" (the FAQ entry's documents); how far a stopped turn got; what a search found when the
 * answer cites none of it ("1 passage found · none cited"); or "No documents used".
 */
export function sourcesPhrase({ sources, steps, triage, cut }: EndedTurn): string {
  const list = sources ?? [];
  const faq = triage?.faq;
  // an FAQ answer cites its documents' passages too: it still says where the answer came from
  if (faq) return faq.sources.length ? `Answered from the FAQ · ${faq.sources.join(", ")}` : "Answered from the FAQ";
  // the not-found reply cites nothing: what it was given comes back uncited (cited: false)
  if (list.length > 0 && list.some((s) => s.cited !== false)) {
    const documents = new Set(list.map((s) => s.document)).size;
    return `${plural(list.length, "passage", "passages")} from ${plural(documents, "document", "documents")}`;
  }
  if (cut) return cutPhrase(cut, steps);
  // searched, but the answer cites nothing (the not-found reply, which names the closest passages): say so, not
  // "No documents used" under a reply that names one (tester)
  const search = steps.findLast((s) => s.node === "retriever");
  if (search?.detail) {
    const found = passagesFound(search);
    const carried = passagesCarried(search);
    // "why?" after an answer re-reads its passages and searches nothing new: not "found no passages" (tester)
    if (found === 0 && carried > 0) return `${plural(carried, "passage", "passages")} from earlier turns · none cited`;
    if (found === 0) return "The search found no passages";
    const what = foundPhrase(found);
    return `${what[0].toUpperCase()}${what.slice(1)} · none cited`;
  }
  return "No documents used";
}

/** The collapsed line of an ended turn: where its answer came from and, when this page saw it run, how long it took. */
export function summaryLine(turn: EndedTurn, seconds?: string): string {
  return seconds ? `${sourcesPhrase(turn)} · ${seconds}` : sourcesPhrase(turn);
}

/**
 * A stored turn's steps ("router: Understanding question (chat: knowledge base is empty)") as timeline steps without
 * times: a reloaded answer shows the same disclosure as a live one, from what the thread kept. A step the turn was
 * cut short in is kept with its label ending in "…" ("retriever: Searching Budget (draft).md…"), and reads back as
 * unfinished, brackets and all.
 */
export function storedSteps(lines: string[] | null | undefined): StatusStep[] {
  return (lines ?? []).map((line) => {
    const unfinished = /^[\w-]+: .*…$/.test(line);
    const m = unfinished ? /^([\w-]+): (.*)$/.exec(line) : /^([\w-]+): (.*?)(?: \((.*)\))?$/.exec(line);
    if (!m) return { node: "", label: line, detail: null, startedAt: 0, endedAt: 0 };
    const step = { node: m[1], label: m[2], detail: m[3] ?? null, startedAt: 0, endedAt: 0 };
    return unfinished ? { ...step, unfinished: true } : step;
  });
}
