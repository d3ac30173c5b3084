/** `[S1]` citation markers in answers: splitting text around them and linking them to sources. */
import { CITATION_PATTERN } from "./contract.gen";
import type { Source } from "./types";

export type CitationPart = { type: "text"; value: string } | { type: "cite"; id: string };

/** `[S1]`, and groups the model sometimes writes: `[S1, S2]`, `[S1][S2]`, `[S1; S3]`. */
const GROUP_RE = new RegExp(CITATION_PATTERN, "g");

/** Text split into plain runs and citation ids, in order; adjacent text runs are merged. */
export function splitCitations(text: string): CitationPart[] {
  const parts: CitationPart[] = [];
  const pushText = (value: string) => {
    if (!value) return;
    const last = parts[parts.length - 1];
    if (last?.type === "text") last.value += value;
    else parts.push({ type: "text", value });
  };
  let at = 0;
  for (const m of text.matchAll(GROUP_RE)) {
    pushText(text.slice(at, m.index));
    for (const id of m[1].split(/\s*[,;]\s*/)) parts.push({ type: "cite", id });
    at = m.index! + m[0].length;
  }
  pushText(text.slice(at));
  return parts;
}

/** Ids cited in an answer, distinct, in order of first appearance. */
export function citedIds(text: string): string[] {
  return [...new Set(splitCitations(text).flatMap((p) => (p.type === "cite" ? [p.id] : [])))];
}

/** The source a marker points to, if the answer's sources include it. */
export function sourceFor(id: string, sources: Source[] | null | undefined): Source | undefined {
  return sources?.find((s) => s.id === id);
}

/** Sources ordered for the panel: cited ones first (in citation order), then the rest. */
export function orderSources(answer: string, sources: Source[]): { source: Source; cited: boolean }[] {
  const cited = citedIds(answer);
  const rank = (s: Source) => {
    const i = cited.indexOf(s.id);
    return i === -1 ? cited.length + sources.indexOf(s) : i;
  };
  return [...sources].sort((a, b) => rank(a) - rank(b)).map((source) => ({ source, cited: cited.includes(source.id) }));
}

/** Fragment id of a source card, unique per message. */
export function sourceAnchor(messageKey: string, id: string): string {
  return `src-${messageKey}-${id}`;
}
