import { describe, expect, it } from "vitest";
import { PREVIEW_ROOM_PX, placePreview } from "@/lib/preview-place";

// The chat column beside an open document at 1400 px: 272-745 px, its top under the header at 56 px.
const column = { left: 272, right: 745, top: 56 };
const marker = (left: number, top = 400) => ({ left, right: left + 24, top });
const edges = (m: { left: number; right: number }, p: { width: number; shift: number }) => {
  const left = (m.left + m.right) / 2 - p.width / 2 + p.shift;
  return { left, right: left + p.width };
};

describe("a citation's hover preview", () => {
  it("is centred on a marker in the middle of the column", () => {
    expect(placePreview(marker(496), column, 1400)).toEqual({ below: false, width: 340, shift: 0 });
  });

  it("moves left off the column's right edge (tester: cut off there, with a scrollbar)", () => {
    const m = marker(575); // "The line manager must approve that [S6]"
    const place = placePreview(m, column, 1400);
    expect(place.shift).toBeLessThan(0);
    expect(edges(m, place).right).toBe(column.right - 8);
  });

  it("moves right off the column's left edge", () => {
    const m = marker(290);
    const place = placePreview(m, column, 1400);
    expect(place.shift).toBeGreaterThan(0);
    expect(edges(m, place).left).toBe(column.left + 8);
  });

  it("narrows to a column narrower than itself, and fills it", () => {
    const phone = { left: 0, right: 390, top: 50 };
    const m = marker(350);
    const place = placePreview(m, phone, 390);
    expect(place.width).toBe(312); // 80% of the window
    const shown = edges(m, place);
    expect(shown.left).toBeGreaterThanOrEqual(8);
    expect(shown.right).toBeLessThanOrEqual(382);
    expect(placePreview(m, { left: 0, right: 300, top: 0 }, 1400).width).toBe(284);
  });

  it("opens below a marker too close to the column's top for it to fit above", () => {
    expect(placePreview(marker(496, column.top + PREVIEW_ROOM_PX - 1), column, 1400).below).toBe(true);
    expect(placePreview(marker(496, column.top + PREVIEW_ROOM_PX), column, 1400).below).toBe(false);
  });
});
