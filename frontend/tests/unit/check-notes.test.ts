import { describe, expect, it } from "vitest";
import { isCheckNote, splitCheckNotes } from "@/lib/check-notes";
import { CHECK_NOTES } from "@/lib/contract.gen";

const [PART_NOT_FOUND, PART_NOT_COVERED, CONFLICT_NOTE] = CHECK_NOTES;
const notFound = `${PART_NOT_FOUND}“is there a gym?”`;
const notCovered = `${PART_NOT_COVERED}“how often must they be changed?”`;
const conflict = `${CONFLICT_NOTE}expense-rules.txt says: “Mileage is reimbursed at 0.42 euros per kilometre when a technician uses a private car.” [S3]`;

describe("isCheckNote", () => {
  it("takes the checks' notes as they write them", () => {
    expect(isCheckNote(notFound)).toBe(true);
    expect(isCheckNote(notCovered)).toBe(true);
    expect(isCheckNote(conflict)).toBe(true);
    expect(isCheckNote(`${PART_NOT_FOUND}“is there a gym?” “and a canteen?”`)).toBe(true);
    expect(isCheckNote(`${CONFLICT_NOTE}a.txt says: “It is 3.” [S2] b.txt says: “It is 4.” [S5]`)).toBe(true);
  });

  it("leaves the model's sentences that only open like one", () => {
    expect(isCheckNote(`${PART_NOT_COVERED}Paris has 2 million people.`)).toBe(false);
    expect(isCheckNote(`${CONFLICT_NOTE}It is 0.42 euros.`)).toBe(false);
    expect(isCheckNote("The office has no gym [S1].")).toBe(false);
  });
});

describe("splitCheckNotes", () => {
  it("splits the trailing notes off, in order, the body a prefix of the answer", () => {
    const body = "Filters are changed every 3 months [S1].\n\nThe unit holds 42 litres [S2].";
    const answer = `${body}\n\n${notCovered}\n\n${conflict}`;
    const split = splitCheckNotes(answer);
    expect(split).toEqual({ body, notes: [notCovered, conflict], notesAt: body.length + 2 });
    expect(answer.startsWith(split.body)).toBe(true);
    expect(answer.slice(split.notesAt)).toBe(`${notCovered}\n\n${conflict}`);
  });

  it("ignores trailing whitespace after the notes", () => {
    expect(splitCheckNotes(`Body [S1].\n\n${notFound}\n\n`)).toEqual({
      body: "Body [S1].",
      notes: [notFound],
      notesAt: 12,
    });
  });

  it("keeps an answer without notes whole", () => {
    const answer = "Leave is 25 days [S1].\n\nAsk HR for more.\n";
    expect(splitCheckNotes(answer)).toEqual({ body: answer, notes: [], notesAt: answer.length });
    expect(splitCheckNotes("")).toEqual({ body: "", notes: [], notesAt: 0 });
  });

  it("takes only the trailing notes: one followed by the model's paragraph is the model's", () => {
    const answer = `Body [S1].\n\n${notFound}\n\nMore from the model.`;
    expect(splitCheckNotes(answer).notes).toEqual([]);
  });

  it("keeps an answer that is only a note as body", () => {
    expect(splitCheckNotes(conflict)).toEqual({ body: conflict, notes: [], notesAt: conflict.length });
    expect(splitCheckNotes(`${notFound}\n\n${conflict}`).body).toBe(notFound);
  });

  it("leaves a paragraph that only opens like a note in the body", () => {
    const answer = `Body [S1].\n\n${PART_NOT_COVERED}Paris has 2 million people.`;
    expect(splitCheckNotes(answer).notes).toEqual([]);
  });

  it("does not take a note's words inside a code block", () => {
    const answer = "Run:\n\n```\n" + conflict + "\n```";
    expect(splitCheckNotes(answer).notes).toEqual([]);
  });
});
