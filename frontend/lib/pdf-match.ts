/**
 * Which text items of a PDF page (pdf.js `getTextContent`) belong to a passage and to its supporting sentence.
 * The page's items are joined into one string (an item ending a line adds a space), whitespace and case are
 * folded on both sides, and every item overlapping a match is boxed. A passage that runs onto other pages, or
 * whose extraction differs from pdf.js's, is matched line by line so that what is on this page still shows.
 */

export interface PageItem {
  str: string;
  hasEOL: boolean;
  rect: { left: number; top: number; width: number; height: number };
}

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
  support: boolean;
}

function fold(text: string): string {
  return text.replace(/\s+/g, " ").trim().toLowerCase();
}

/** The page text, folded, with the item each character came from. */
function pageText(items: PageItem[]): { text: string; owner: number[] } {
  let text = "";
  const owner: number[] = [];
  const push = (s: string, i: number) => {
    for (const ch of s) {
      const c = /\s/.test(ch) ? " " : ch.toLowerCase();
      if (c === " " && (text.endsWith(" ") || text === "")) continue;
      text += c;
      owner.push(i);
    }
  };
  items.forEach((item, i) => push(item.str + (item.hasEOL ? " " : ""), i));
  return { text, owner };
}

/** Items covered by the folded `needle` in the page text (all of them where it occurs more than once). */
function itemsMatching(page: { text: string; owner: number[] }, needle: string): Set<number> {
  const found = new Set<number>();
  const want = fold(needle);
  if (want.length < 4) return found;
  let at = page.text.indexOf(want);
  while (at >= 0) {
    for (let k = at; k < at + want.length; k++) found.add(page.owner[k]);
    at = page.text.indexOf(want, at + want.length);
  }
  return found;
}

/** Boxes over the passage's items, those of the supporting sentence marked `support`. */
export function matchBoxes(items: PageItem[], passage: string, support: string): Box[] {
  const page = pageText(items);
  let inPassage = itemsMatching(page, passage);
  if (inPassage.size === 0) {
    inPassage = new Set(passage.split(/\n+/).flatMap((line) => [...itemsMatching(page, line)]));
  }
  let inSupport = itemsMatching(page, support);
  if (inSupport.size === 0) {
    // A sentence broken across lines whose break pdf.js reads differently: match its parts.
    inSupport = new Set(support.split(/\n+/).flatMap((line) => [...itemsMatching(page, line)]));
  }
  const boxes: Box[] = [];
  items.forEach((item, i) => {
    if (!item.str.trim() || item.rect.width <= 0) return;
    if (inSupport.has(i) || inPassage.has(i)) boxes.push({ ...item.rect, support: inSupport.has(i) });
  });
  return boxes;
}

/**
 * A box as percentages of the page drawn: the page is scaled to the pane's width by CSS (it may narrow once drawn, when
 * a scrollbar appears), and the boxes scale with it.
 */
export function boxStyle(box: Box, page: { width: number; height: number }): Record<string, string> {
  const pct = (value: number, of: number) => `${(100 * value) / of}%`;
  return {
    left: pct(box.left, page.width),
    top: pct(box.top, page.height),
    width: pct(box.width, page.width),
    height: pct(box.height, page.height),
  };
}
