/**
 * Where an arrow key moves the focus in a list of rows of controls that is one tab stop (a roving tabindex, with the
 * keys of WAI-ARIA's grid pattern): Up and Down to the same control of the row above or below, Left and Right along
 * the row, Home and End to the first and last row. A row with no controls (one being renamed) is stepped over.
 */
export interface Cell {
  row: number;
  col: number;
}

/** The cell the key moves to, or null when it does not move (an edge, or not a key of the list). */
export function moveFocus(key: string, at: Cell, rows: number, cells: (row: number) => number): Cell | null {
  const landing = (row: number, col: number): Cell => ({ row, col: Math.min(col, cells(row) - 1) });
  const scan = (from: number, step: 1 | -1, col: number): Cell | null => {
    for (let row = from; row >= 0 && row < rows; row += step) if (cells(row) > 0) return landing(row, col);
    return null;
  };
  switch (key) {
    case "ArrowDown":
      return scan(at.row + 1, 1, at.col);
    case "ArrowUp":
      return scan(at.row - 1, -1, at.col);
    case "Home":
      return at.row === 0 && at.col === 0 ? null : scan(0, 1, 0);
    case "End":
      return scan(rows - 1, -1, 0);
    case "ArrowRight":
      return at.col + 1 < cells(at.row) ? { row: at.row, col: at.col + 1 } : null;
    case "ArrowLeft":
      return at.col > 0 ? { row: at.row, col: at.col - 1 } : null;
    default:
      return null;
  }
}
