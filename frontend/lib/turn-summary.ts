/** What one line says about a turn: what is happening now while it runs, and a summary once it has ended. */
import type { StatusStep } from "./chat-turn";
import type { Source } from "./types";

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

/** "3 passages from 2 documents" (distinct documents), or "No documents used". */
export function sourcesPhrase(sources: Source[] | undefined): string {
  const list = sources ?? [];
  if (list.length === 0) return "No documents used";
  const documents = new Set(list.map((s) => s.document)).size;
  return `${plural(list.length, "passage", "passages")} from ${plural(documents, "document", "documents")}`;
}

/** The collapsed line of an ended turn: its sources and, when this page saw it run, how long it took. */
export function summaryLine(sources: Source[] | undefined, seconds?: string): string {
  return seconds ? `${sourcesPhrase(sources)} · ${seconds}` : sourcesPhrase(sources);
}

/**
 * A stored turn's steps ("router: Understanding question (chat: knowledge base is empty)") as timeline steps without
 * times: a reloaded answer shows the same disclosure as a live one, from what the thread kept.
 */
export function storedSteps(lines: string[] | null | undefined): StatusStep[] {
  return (lines ?? []).map((line) => {
    const m = /^([\w-]+): (.*?)(?: \((.*)\))?$/.exec(line);
    if (!m) return { node: "", label: line, detail: null, startedAt: 0, endedAt: 0 };
    return { node: m[1], label: m[2], detail: m[3] ?? null, startedAt: 0, endedAt: 0 };
  });
}
