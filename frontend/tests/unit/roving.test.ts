import { describe, expect, it } from "vitest";
import { moveFocus } from "@/lib/roving";

// Three conversations: a link, Rename and Delete each; the middle one is being renamed (no controls).
const cells = (row: number) => (row === 1 ? 0 : 3);

describe("moveFocus", () => {
  it("moves along a row with Left and Right, stopping at its ends", () => {
    expect(moveFocus("ArrowRight", { row: 0, col: 0 }, 3, cells)).toEqual({ row: 0, col: 1 });
    expect(moveFocus("ArrowRight", { row: 0, col: 2 }, 3, cells)).toBeNull();
    expect(moveFocus("ArrowLeft", { row: 0, col: 2 }, 3, cells)).toEqual({ row: 0, col: 1 });
    expect(moveFocus("ArrowLeft", { row: 0, col: 0 }, 3, cells)).toBeNull();
  });

  it("moves between rows with Up and Down, keeping the column and stepping over a row with no controls", () => {
    expect(moveFocus("ArrowDown", { row: 0, col: 2 }, 3, cells)).toEqual({ row: 2, col: 2 });
    expect(moveFocus("ArrowUp", { row: 2, col: 0 }, 3, cells)).toEqual({ row: 0, col: 0 });
    expect(moveFocus("ArrowDown", { row: 2, col: 0 }, 3, cells)).toBeNull();
    expect(moveFocus("ArrowUp", { row: 0, col: 1 }, 3, cells)).toBeNull();
  });

  it("keeps to a shorter row's last control", () => {
    expect(moveFocus("ArrowDown", { row: 0, col: 2 }, 2, (row) => (row === 0 ? 3 : 1))).toEqual({ row: 1, col: 0 });
  });

  it("goes to the first and last row's first control with Home and End", () => {
    expect(moveFocus("Home", { row: 2, col: 2 }, 3, cells)).toEqual({ row: 0, col: 0 });
    expect(moveFocus("End", { row: 0, col: 1 }, 3, cells)).toEqual({ row: 2, col: 0 });
    expect(moveFocus("Home", { row: 0, col: 0 }, 3, cells)).toBeNull();
  });

  it("leaves other keys alone", () => {
    for (const key of ["Enter", " ", "Tab", "a", "PageDown"])
      expect(moveFocus(key, { row: 0, col: 0 }, 3, cells)).toBeNull();
  });
});
