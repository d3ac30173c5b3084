import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MarkdownAnswer } from "@/components/markdown-answer";
import { CHECK_NOTE_LABEL } from "@/lib/check-notes";
import { CHECK_NOTES } from "@/lib/contract.gen";
import type { Span } from "@/lib/remark-unsupported";

const conflict = `${CHECK_NOTES[2]}expense-rules.txt says: “Mileage is reimbursed at 0.42 euros per kilometre.” [S3]`;
const body = "Mileage is reimbursed at 0.30 euros per kilometre [S1]. Taxis need a receipt [S2].";
const answer = `${body}\n\n${conflict}`;

const render = (text: string, unsupported?: Span[]) =>
  renderToStaticMarkup(<MarkdownAnswer text={text} unsupported={unsupported} />);
/** The HTML of the note and of what comes before it. */
const parts = (html: string) => {
  const at = html.indexOf("<aside");
  return { before: at < 0 ? html : html.slice(0, at), note: at < 0 ? "" : html.slice(at) };
};

describe("the checks' notes in an answer", () => {
  it("sets a note apart after the body, its marker a citation chip like the body's", () => {
    const { before, note } = parts(render(answer));
    expect(note).toMatch(/^<aside class="check-note" role="note" aria-label="Note from Ragline&#x27;s checks">/);
    expect(note).toContain(CHECK_NOTE_LABEL);
    expect(note).toContain("Another document gives a different figure");
    expect(note).toMatch(/<button[^>]*class="cite-marker"[^>]*data-cite="S3"[^>]*>S3<\/button>/);
    expect(before).toContain("0.30 euros");
    expect(before).toMatch(/<button[^>]*class="cite-marker"[^>]*data-cite="S1"/);
    expect(before).not.toContain("Another document");
  });

  it("renders an answer without a note, or only a note, as before: no aside", () => {
    expect(render(body)).not.toContain("<aside");
    expect(render(conflict)).not.toContain("<aside");
  });

  it("keeps the underlined claims on their text, in the body and in the note", () => {
    const start = body.indexOf("Taxis");
    const inNote = answer.indexOf("Mileage is reimbursed at 0.42");
    const { before, note } = parts(
      render(answer, [
        { start, end: body.indexOf(" [S2]") },
        { start: inNote, end: inNote + "Mileage is reimbursed".length },
      ]),
    );
    expect(before).toMatch(/<span class="unsupported"[^>]*>Taxis need a receipt<\/span>/);
    // (then what a screen reader is told of it, not shown)
    expect(note).toMatch(
      /<span class="unsupported"[^>]*>Mileage is reimbursed<\/span><span class="visually-hidden">[^<]*<\/span> at 0.42/,
    );
  });
});
