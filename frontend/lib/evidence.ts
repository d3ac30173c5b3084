/**
 * "Show me where": which sentence of an answer cites a source, which sentence of the cited passage supports it,
 * and how a document's text splits around the passage for the viewer to highlight.
 */
import { citedIds, splitCitations } from "./citations";
import { SAYING_VERB } from "./contract.gen";
import type { DocumentText, Source } from "./types";

// A line break ends a sentence unless the next line carries on in lower case or with a number: PDF text is
// wrapped at line ends ("In capital cities the limit is\n190 euros per night.").
const SENTENCE_END = /(?<=[.!?])\s+|\n+(?![ \t]*[\p{Ll}\p{N}])/u;
const WORD = /[\p{L}\p{N}]+/gu;

/** Content words of a text, lowercased, with a crude plural folded ("costs" matches "cost"). */
function words(text: string): Set<string> {
  const out = new Set<string>();
  for (const [w] of text.toLowerCase().matchAll(WORD)) {
    if (w.length < 3 && !/\d/.test(w)) continue;
    out.add(w.length > 3 && w.endsWith("s") ? w.slice(0, -1) : w);
  }
  return out;
}

/** Sentences of a text with their offsets. */
export function sentences(text: string): { start: number; end: number; text: string }[] {
  const out: { start: number; end: number; text: string }[] = [];
  let at = 0;
  for (const piece of text.split(SENTENCE_END)) {
    const start = text.indexOf(piece, at);
    if (start < 0) continue;
    at = start + piece.length;
    const lead = piece.length - piece.trimStart().length;
    const trimmed = piece.trim();
    if (trimmed) out.push({ start: start + lead, end: start + lead + trimmed.length, text: trimmed });
  }
  return out;
}

type Part = ReturnType<typeof splitCitations>[number];

/** Where a sentence's first word is among its parts (its length when it has none). */
function firstWord(parts: Part[]): number {
  const at = parts.findIndex((p) => p.type === "text" && /[\p{L}\p{N}]/u.test(p.value));
  return at < 0 ? parts.length : at;
}

/**
 * The sentence of the answer that carries the `nth` marker of `id` (0: the first), without its markers ("" if
 * none does; the first such sentence when there are fewer). A marker written after the full stop ("… 63 euros.
 * [S1] Receipts …") opens the next piece of text, but cites the sentence before it.
 */
export function claimFor(answer: string, id: string, nth = 0): string {
  const all = sentences(answer).map((s) => splitCitations(s.text));
  const marked = (parts: Part[]) => parts.slice(firstWord(parts)).some((p) => p.type === "cite");
  const ofId = (parts: Part[]) => parts.filter((p) => p.type === "cite" && p.id === id).length;
  // a sentence's leading markers are the sentence before's when that one has none of its own, unless they are the
  // subject of a verb of saying ("[S4] states that …": that sentence's own, as the backend reads it)
  const leadsBack = (i: number) =>
    i > 0 && !marked(all[i - 1]) && firstWord(all[i - 1]) < all[i - 1].length && !opensWithSubject(all[i]);
  const citing: string[] = []; // one entry per marker of `id`, in order: the sentence it cites
  for (let i = 0; i < all.length; i++) {
    const words = firstWord(all[i]);
    if (words === all[i].length) {
      // markers only: the sentence before holds them (counted with it unless it leads back to it)
      if (!leadsBack(i) && citing.length && ofId(all[i])) {
        const last = lastSentence(all, i);
        for (let k = 0; k < ofId(all[i]); k++) citing.push(last);
      }
      continue;
    }
    const own = all[i].slice(leadsBack(i) ? words : 0);
    const next = i + 1 < all.length && leadsBack(i + 1) ? all[i + 1].slice(0, firstWord(all[i + 1])) : [];
    const markers = ofId([...own, ...next]);
    for (let k = 0; k < markers; k++) citing.push(plain(all[i]));
  }
  return citing[nth] ?? citing[0] ?? "";
}

const SUBJECT = new RegExp(`^\\s*${SAYING_VERB}`, "i");

/** Whether a sentence opens with markers that are the subject of a verb of saying ("[S4] states that …"). */
function opensWithSubject(parts: Part[]): boolean {
  const at = firstWord(parts);
  if (at === 0 || at === parts.length) return false;
  const rest = parts.slice(at).flatMap((p) => (p.type === "text" ? [p.value] : []));
  return SUBJECT.test(rest.join(""));
}

/** A sentence's text without its markers. */
function plain(parts: Part[]): string {
  return parts
    .flatMap((p) => (p.type === "text" ? [p.value] : []))
    .join("")
    .replace(/\s+([.,;:!?])/g, "$1")
    .trim();
}

/** The text of the last sentence before `i` that has words. */
function lastSentence(all: Part[][], i: number): string {
  for (let j = i - 1; j >= 0; j--) if (firstWord(all[j]) < all[j].length) return plain(all[j]);
  return "";
}

/**
 * The span (relative to `passage`) of the passage sentence that shares the most words with the claim,
 * or null when no sentence shares any word (then the whole passage is the evidence).
 */
export function supportingSpan(passage: string, claim: string): { start: number; end: number } | null {
  const want = words(claim);
  let best: { start: number; end: number } | null = null;
  let bestScore = 0;
  for (const s of sentences(passage)) {
    let score = 0;
    for (const w of words(s.text)) if (want.has(w)) score += /\d/.test(w) ? 2 : 1;
    if (score > bestScore) {
      bestScore = score;
      best = { start: s.start, end: s.end };
    }
  }
  return best;
}

export interface EvidenceView {
  /** The text shown: the whole document, or for a PDF the page the passage starts on. */
  before: string;
  /** The cited passage, split around its supporting sentence. */
  passageBefore: string;
  support: string;
  passageAfter: string;
  after: string;
  /** PDF page number of the shown text (null for other types). */
  page: number | null;
}

/**
 * Whether the text at a source's span is still the passage cited: it holds the source's snippet (the opening of
 * its best chunk), whitespace aside. A file replaced since has other text there, and the viewer highlighted it as
 * the cited passage (tester).
 */
export function holdsSnippet(passage: string, snippet: string): boolean {
  const flat = (text: string) => text.split(/\s+/).join(" ").trim();
  const core = flat(snippet.replace(/…$/, ""));
  return !core || flat(passage).includes(core);
}

/**
 * The document's text cut around the source's span, with the supporting sentence singled out. A PDF shows the
 * page of the supporting sentence (and the whole passage, when it runs over a page break). Null when the source has no span
 * in this text, or holds another passage there (an older index, or a document replaced since).
 */
export function evidenceView(doc: DocumentText, source: Source, claim: string): EvidenceView | null {
  const { start, end } = source;
  if (start == null || end == null || start < 0 || end > doc.text.length || start >= end) return null;
  const passage = doc.text.slice(start, end);
  if (!holdsSnippet(passage, source.snippet)) return null;
  const found = supportingSpan(passage, claim);
  const span = found ?? { start: 0, end: passage.length };
  let from = 0;
  let to = doc.text.length;
  let page: number | null = null;
  const at = start + span.start; // the page of the supporting sentence, which a passage may reach over a page break
  const onPage = found
    ? doc.pages?.find((p) => p.start <= at && at < p.end)
    : (doc.pages?.find((p) => p.page === source.page && p.start < end && start < p.end) ?? // the source's page
      doc.pages?.find((p) => p.start <= at && at < p.end));
  if (onPage) {
    from = Math.min(onPage.start, start);
    to = Math.max(onPage.end, end);
    page = onPage.page;
  }
  return {
    before: doc.text.slice(from, start),
    passageBefore: passage.slice(0, span.start),
    support: passage.slice(span.start, span.end),
    passageAfter: passage.slice(span.end),
    after: doc.text.slice(end, to),
    page,
  };
}
