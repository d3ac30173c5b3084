/** A thread's title from its first question, cut as the backend cuts it (backend/contract/text.py title_from). */
import { TITLE_CHARS } from "./contract.gen";

/** One line of at most TITLE_CHARS characters (code points, as in Python): longer ones end in "…". */
export function titleFrom(question: string): string {
  const flat = question.split(/\s+/).filter(Boolean).join(" ");
  const chars = Array.from(flat);
  if (chars.length <= TITLE_CHARS) return flat;
  const cut = chars.slice(0, TITLE_CHARS - 1).join("");
  return `${cut.trimEnd()}…`;
}

/** A file name for a thread's export: its title's letters, digits, spaces and dashes ("conversation" if none). */
export function exportName(title: string): string {
  const name = title
    .replace(/[^\p{L}\p{N} _-]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 80)
    .trim();
  return `${name || "conversation"}.md`;
}
