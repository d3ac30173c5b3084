/**
 * @mentions as the backend reads them (backend/contract/text.py MENTION_PATTERN, generated into
 * contract.gen.ts, and backend/rag/mentions.py): `@name` or `@"name with spaces"`, matched case-insensitively
 * against document names with the extension optional, then by containment and close spelling.
 */
import { MENTION_PATTERN } from "./contract.gen";

/** Group 1 is a quoted name, group 2 a bare one; "u" so that it reads code points, as Python does. */
const MENTION_RE = new RegExp(MENTION_PATTERN, "gu");

export interface Mention {
  /** The name as written, without `@` and quotes. */
  name: string;
  /** Offsets of the whole `@…` token in the text. */
  start: number;
  end: number;
}

/** Every mention in the text, in order (duplicates kept, so each can be located). */
export function findMentions(text: string): Mention[] {
  const found: Mention[] = [];
  for (const m of text.matchAll(MENTION_RE)) {
    found.push({ name: m[1] ?? m[2], start: m.index!, end: m.index! + m[0].length });
  }
  return found;
}

/** Distinct mentioned names, in order: what the backend targets. */
export function mentionNames(text: string): string[] {
  return [...new Set(findMentions(text).map((m) => m.name))];
}

/** A name or a query as the autocomplete compares them: in lower case, without accents ("Résumé" -> "resume"). */
function plain(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

/** Lowercase words of letters and digits without accents, joined by single spaces, as the backend's name_key:
 * "Employee_Handbook.md" -> "employee handbook md", "Résumé équipe" -> "resume equipe". */
function norm(name: string): string {
  return plain(name)
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
    .replace(/ +/g, " ");
}

/** A name as names are told apart (the backend's fold_name): composed, in lower case. */
function fold(name: string): string {
  return name.normalize("NFC").toLowerCase();
}

function stem(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? norm(name.slice(0, dot)) : norm(name);
}

/** Similarity 0..1 from the edit distance (a stand-in for the backend's difflib ratio; lenient on purpose). */
function similarity(a: string, b: string): number {
  if (!a.length && !b.length) return 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return 1 - prev[b.length] / Math.max(a.length, b.length);
}

export const FUZZY_CUTOFF = 0.75;

/**
 * Candidate documents for a mention, by the backend's rules in order (backend/rag/mentions.py):
 * exact name, same stem, stem contained, then close spelling. One candidate resolves; several are ambiguous.
 */
export function mentionCandidates(mention: string, documents: string[]): string[] {
  const exact = documents.filter((d) => fold(d) === fold(mention));
  if (exact.length) return exact;
  const ext = mention.includes(".") ? mention.slice(mention.lastIndexOf(".") + 1) : "";
  const key = ext && /^\p{L}+$/u.test(ext) ? stem(mention) : norm(mention);
  if (!key) return [];
  const same = documents.filter((d) => stem(d) === key);
  if (same.length) return same;
  const contained = documents.filter((d) => stem(d).includes(key));
  if (contained.length) return contained;
  return documents
    .map((d) => ({ d, r: similarity(key, stem(d)) }))
    .filter((x) => x.r >= FUZZY_CUTOFF)
    .sort((x, y) => y.r - x.r)
    .slice(0, 3)
    .map((x) => x.d);
}

/** The document a mention refers to when exactly one matches, else undefined. */
export function resolveMention(name: string, documents: string[]): string | undefined {
  const found = mentionCandidates(name, documents);
  return found.length === 1 ? found[0] : undefined;
}

/** Mentions split into known (one document), ambiguous (several) and unknown (none). */
export function classifyMentions(
  text: string,
  documents: string[],
): {
  known: { name: string; document: string }[];
  ambiguous: { name: string; documents: string[] }[];
  unknown: string[];
} {
  const known: { name: string; document: string }[] = [];
  const ambiguous: { name: string; documents: string[] }[] = [];
  const unknown: string[] = [];
  for (const name of mentionNames(text)) {
    const found = mentionCandidates(name, documents);
    if (found.length === 1) known.push({ name, document: found[0] });
    else if (found.length > 1) ambiguous.push({ name, documents: found });
    else unknown.push(name);
  }
  return { known, ambiguous, unknown };
}

/** The mention being typed at the caret (`@emp|` or `@"my do|`), for autocomplete: its query and start. */
export function activeMention(text: string, caret: number): { query: string; start: number } | null {
  const before = text.slice(0, caret);
  // A mention starts where MENTION_PATTERN lets one start: not after [A-Za-z0-9_@] (e-mail addresses, @@).
  const m = /(?:^|[^A-Za-z0-9_@])@(?:"([^"]*)|([^\s"@]*))$/u.exec(before);
  if (!m) return null;
  return { query: m[1] ?? m[2], start: m.index + m[0].indexOf("@") };
}

/** How to write a mention of a document: its stem when that round-trips, else the quoted full name. */
export function mentionToken(document: string): string {
  const dot = document.lastIndexOf(".");
  const short = dot > 0 ? document.slice(0, dot) : document;
  for (const candidate of [short, document]) {
    const parsed = findMentions(`@${candidate}`);
    if (parsed.length === 1 && parsed[0].name === candidate && parsed[0].end === candidate.length + 1) {
      return `@${candidate}`;
    }
  }
  return `@"${document}"`;
}

/** Every document whose name contains the query, accents aside, prefix matches first (the autocomplete lists the
 * first few and says how many more there are). */
export function matchDocuments<T extends { name: string }>(documents: T[], query: string): T[] {
  const q = plain(query);
  const hits = documents.filter((d) => plain(d.name).includes(q));
  hits.sort((a, b) => {
    const pa = plain(a.name).startsWith(q) ? 0 : 1;
    const pb = plain(b.name).startsWith(q) ? 0 : 1;
    return pa - pb || a.name.localeCompare(b.name);
  });
  return hits;
}

/** What an autocomplete option says of its document after the name: "markdown · 1 chunk", "pdf · 3 chunks". */
export function optionMeta(document: { type: string; chunks?: number | null }): string {
  if (document.chunks == null) return document.type;
  return `${document.type} · ${document.chunks} ${document.chunks === 1 ? "chunk" : "chunks"}`;
}

/** How many of `matchDocuments`' documents the autocomplete lists at most. */
export const LISTED = 8;

/** Replace the mention being typed (from `start` to the caret) with a document's token and a space. */
export function insertMention(
  text: string,
  start: number,
  caret: number,
  document: string,
): { text: string; caret: number } {
  const token = mentionToken(document) + " ";
  // Drop the rest of the word being typed after the caret, and one space the token already brings.
  const rest = text
    .slice(caret)
    .replace(/^[^\s"]*"?/, "")
    .replace(/^ /, "");
  return { text: text.slice(0, start) + token + rest, caret: start + token.length };
}

/** The text with one mention (all its occurrences) removed, whitespace tidied. */
export function removeMention(text: string, name: string): string {
  let out = text;
  for (const m of findMentions(text).reverse()) {
    if (m.name === name) out = out.slice(0, m.start) + out.slice(m.end);
  }
  return out.replace(/[ \t]{2,}/g, " ").replace(/^\s+/, "");
}
