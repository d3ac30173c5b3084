/**
 * backend/contract/vectors.json against the UI's functions; backend/tests/test_contract_vectors.py checks the
 * backend's against the same file. Read at run time (not imported) so that `next build`, whose context is
 * frontend/ alone, does not need it.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { splitCheckNotes } from "@/lib/check-notes";
import { citedIds } from "@/lib/citations";
import { TITLE_CHARS } from "@/lib/contract.gen";
import { mentionNames } from "@/lib/mentions";
import { titleFrom } from "@/lib/titles";

interface Vectors {
  title_chars: number;
  citations: { text: string; cited: string[] }[];
  mentions: { text: string; names: string[] }[];
  titles: { question: string; title: string }[];
  check_notes: { answer: string; body: string; notes: string[] }[];
}

const vectors: Vectors = JSON.parse(
  readFileSync(new URL("../../../backend/contract/vectors.json", import.meta.url), "utf8"),
);

describe("contract vectors (backend/contract/vectors.json)", () => {
  it.each(vectors.citations)("citedIds($text)", ({ text, cited }) => {
    expect(citedIds(text)).toEqual(cited);
  });

  it.each(vectors.mentions)("mentionNames($text)", ({ text, names }) => {
    expect(mentionNames(text)).toEqual(names);
  });

  it("titles are written for this TITLE_CHARS", () => {
    expect(vectors.title_chars).toBe(TITLE_CHARS);
  });

  it.each(vectors.titles)("titleFrom($question)", ({ question, title }) => {
    expect(titleFrom(question)).toBe(title);
  });

  it.each(vectors.check_notes)("splitCheckNotes($answer)", ({ answer, body, notes }) => {
    const split = splitCheckNotes(answer);
    expect([split.body, split.notes]).toEqual([body, notes]);
  });
});
