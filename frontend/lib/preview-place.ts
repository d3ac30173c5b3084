/** Where a citation's hover preview goes: above or below its marker, and shifted sideways to stay in the column. */

/** About the tallest preview: a title line and six lines of snippet. */
export const PREVIEW_ROOM_PX = 190;
/** The preview's width where there is room for it. */
export const PREVIEW_WIDTH_PX = 340;
/** The gap kept between the preview and the column's edges. */
const EDGE_PX = 8;

/** A box's edges on screen (a DOMRect has them). */
export interface Edges {
  left: number;
  right: number;
  top: number;
}

export interface PreviewPlace {
  /** Below the marker: too close to the column's top for the preview to fit above it. */
  below: boolean;
  /** The preview's width in px: 340, or what the column (and 80% of the window) leaves. */
  width: number;
  /** px to move the preview right (negative: left) of centred on the marker, so it stays within the column. */
  shift: number;
}

/**
 * The preview of the marker at `marker`, centred on it when it fits, within the column's visible area `column`
 * (the conversation's scroll box, without its scrollbar): a preview past its edge was cut off there and scrolled
 * the column sideways (tester, with a document open beside the chat at 1400 px).
 */
export function placePreview(marker: Edges, column: Edges, windowWidth: number): PreviewPlace {
  const room = Math.max(0, column.right - column.left - 2 * EDGE_PX);
  const width = Math.min(PREVIEW_WIDTH_PX, 0.8 * windowWidth, room);
  const left = (marker.left + marker.right) / 2 - width / 2;
  const min = column.left + EDGE_PX;
  const max = column.right - EDGE_PX - width;
  const shift = left < min ? min - left : left > max ? max - left : 0;
  return { below: marker.top - column.top < PREVIEW_ROOM_PX, width, shift };
}
