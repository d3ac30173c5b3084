import { describe, expect, it } from "vitest";
import { TITLE_CHARS } from "@/lib/contract.gen";
import { titleFrom } from "@/lib/titles";

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
