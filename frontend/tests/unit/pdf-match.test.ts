import { describe, expect, it } from "vitest";
import { type PageItem, boxStyle, matchBoxes } from "@/lib/pdf-match";

const item = (str: string, top: number, hasEOL = true): PageItem => ({
  str,
  hasEOL,
  rect: { left: 10, top, width: 100, height: 12 },
});

// pdf.js gives one item per line here; the extracted text breaks the same lines with "\n".
const items = [
  item("Per-diem amounts", 0),
  item("Meals are reimbursed up to 45 euros per day. For a travel day shorter than 8", 20),
  item("hours the limit is 20 euros. Hotels are reimbursed up to 140", 40),
  item("euros per night.", 60),
  item("Approval steps", 80),
];

describe("matchBoxes", () => {
  it("boxes the passage's lines and marks those of the supporting sentence, across a line break", () => {
    const passage =
      "Meals are reimbursed up to 45 euros per day. For a travel day shorter than 8\nhours the limit is 20 euros.";
    const boxes = matchBoxes(items, passage, "For a travel day shorter than 8\nhours the limit is 20 euros.");
    expect(boxes.map((b) => [b.top, b.support])).toEqual([
      [20, true],
      [40, true],
    ]);
  });

  it("keeps passage items that are not the sentence as passage boxes", () => {
    const passage = "Per-diem amounts\nMeals are reimbursed up to 45 euros per day.";
    const boxes = matchBoxes(items, passage, "Per-diem amounts");
    expect(boxes.map((b) => [b.top, b.support])).toEqual([
      [0, true],
      [20, false],
    ]);
  });

  it("matches a passage whose extraction differs, line by line, and boxes nothing for foreign text", () => {
    const passage = "Approval  steps\nsomething pdf.js reads differently";
    expect(matchBoxes(items, passage, "not on this page at all").map((b) => b.top)).toEqual([80]);
    expect(matchBoxes(items, "Elsewhere entirely.", "Elsewhere entirely.")).toEqual([]);
  });
});

describe("boxStyle", () => {
  it("places a box in percentages of the page drawn, so it scales with the page", () => {
    const box = { left: 60, top: 200, width: 300, height: 16, support: true };
    expect(boxStyle(box, { width: 600, height: 800 })).toEqual({
      left: "10%",
      top: "25%",
      width: "50%",
      height: "2%",
    });
  });
});
