/**
 * The closing paragraphs Ragline's checks may append to an answer (the parts of the question it leaves, another
 * document's different figure), told apart from the model's words so the UI can show them as the checks' notes.
 * Mirrors backend/guardrails/text.py (`is_check_note`, `split_notes`): a note is a paragraph that starts with one
 * of CHECK_NOTES and goes on with what the checks quote, so a sentence of the model that only opens like one stays
 * the model's.
 */
import { CHECK_NOTES } from "./contract.gen";

/** The visible label of the notes' block, and its accessible name. */
export const CHECK_NOTE_LABEL = "Checked by Ragline";
export const CHECK_NOTE_NAME = "Note from Ragline's checks";

const [PART_NOT_FOUND, PART_NOT_COVERED, CONFLICT_NOTE] = CHECK_NOTES;
// what follows a note's lead: the parts of the question, quoted; or each other document's sentence, quoted with its
// marker
const PARTS_QUOTED = /^(?:\s*“[^”]*”)+\s*$/;
const SAYS_QUOTED = /^(?:\s*[^“”]+? says: “[^”]*” \[S\d+\])+\s*$/;

/** Whether a paragraph is one of the checks' notes as they write it. */
export function isCheckNote(paragraph: string): boolean {
  const text = paragraph.trim();
  const conflict = CONFLICT_NOTE.trim();
  if (text.startsWith(conflict)) {
    const rest = text.slice(conflict.length);
    return !rest.trim() || SAYS_QUOTED.test(rest);
  }
  return [PART_NOT_FOUND, PART_NOT_COVERED].some(
    (lead) => text.startsWith(lead) && PARTS_QUOTED.test(text.slice(lead.length)),
  );
}

export interface CheckNoteSplit {
  /** The model's answer: the text before the notes (a prefix of the answer, so offsets into it still hold). */
  body: string;
  /** The checks' notes, in order. */
  notes: string[];
  /** Where the first note starts in the answer; the answer's length when there is none. */
  notesAt: number;
}

const SEPARATOR = "\n\n";

/** An answer split into its body and the trailing paragraphs that are the checks' notes; an answer that is only a
 * note is all body (a note alone is no answer with a note). */
export function splitCheckNotes(answer: string): CheckNoteSplit {
  const text = answer.trimEnd();
  const starts = [0];
  for (let at = text.indexOf(SEPARATOR); at >= 0; at = text.indexOf(SEPARATOR, at + SEPARATOR.length)) {
    starts.push(at + SEPARATOR.length);
  }
  const paragraph = (i: number) =>
    text.slice(starts[i], i + 1 < starts.length ? starts[i + 1] - SEPARATOR.length : text.length);
  let at = starts.length;
  while (at > 1 && isCheckNote(paragraph(at - 1))) at -= 1;
  if (at === starts.length) return { body: answer, notes: [], notesAt: answer.length };
  const notes = [];
  for (let i = at; i < starts.length; i++) notes.push(paragraph(i));
  return { body: text.slice(0, starts[at] - SEPARATOR.length), notes, notesAt: starts[at] };
}
