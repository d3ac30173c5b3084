import { describe, expect, it } from "vitest";
import { TITLE_CHARS } from "@/lib/contract.gen";
import { exportName, titleFrom } from "@/lib/titles";

describe("titleFrom", () => {
  it("keeps a short question on one line", () => {
    expect(titleFrom("  What is\n the notice   period? ")).toBe("What is the notice period?");
  });

  it("cuts a long one to TITLE_CHARS characters ending in an ellipsis", () => {
    const exact = "x".repeat(TITLE_CHARS);
    expect(titleFrom(exact)).toBe(exact);
    const long = `${"a".repeat(TITLE_CHARS - 2)} ${"b".repeat(20)}`;
    expect(titleFrom(long)).toBe(`${"a".repeat(TITLE_CHARS - 2)}…`);
    expect(Array.from(titleFrom("😀".repeat(TITLE_CHARS + 5)))).toHaveLength(TITLE_CHARS);
  });
});

describe("exportName", () => {
  it("keeps a title's words and drops what a file name should not hold", () => {
    expect(exportName("What is the notice period?")).toBe("What is the notice period.md");
    expect(exportName("a/b\\c: <d>")).toBe("a b c d.md");
    expect(exportName("Préavis — période")).toBe("Préavis période.md");
    expect(exportName("???")).toBe("conversation.md");
  });
});
