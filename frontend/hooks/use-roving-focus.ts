"use client";
/**
 * A list whose rows hold several controls, as one tab stop (roving tabindex): Tab enters at the row last used (else
 * `preferred`, else the first) and then leaves the list; the arrow keys move inside it (lib/roving.ts). Rows carry
 * data-roving-row="<key>", their controls data-roving-cell; a row's first control is its tab stop.
 */
import { useState } from "react";
import { moveFocus } from "@/lib/roving";

export interface RovingFocus {
  /** The key of the row whose first control takes the Tab; every other control of the list has tabIndex -1. */
  tabStop: string | null;
  onFocus: (e: React.FocusEvent<HTMLElement>) => void;
  onKeyDown: (e: React.KeyboardEvent<HTMLElement>) => void;
}

const ROW = "[data-roving-row]";
const CELL = "[data-roving-cell]";
const cellsOf = (row: Element) => [...row.querySelectorAll<HTMLElement>(CELL)];

export function useRovingFocus(keys: string[], preferred: string | null): RovingFocus {
  const [used, setUsed] = useState<string | null>(null);
  const tabStop = [used, preferred].find((k) => k !== null && keys.includes(k)) ?? keys[0] ?? null;

  const onFocus = (e: React.FocusEvent<HTMLElement>) => {
    const row = e.target.matches(CELL) ? e.target.closest<HTMLElement>(ROW) : null;
    if (row?.dataset.rovingRow) setUsed(row.dataset.rovingRow);
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLElement>) => {
    const cell = e.target as HTMLElement;
    const row = cell.matches(CELL) ? cell.closest(ROW) : null;
    if (!row || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const rows = [...e.currentTarget.querySelectorAll(ROW)];
    const at = { row: rows.indexOf(row), col: cellsOf(row).indexOf(cell) };
    const next = moveFocus(e.key, at, rows.length, (i) => cellsOf(rows[i]).length);
    if (!next) return;
    e.preventDefault();
    cellsOf(rows[next.row])[next.col].focus();
  };

  return { tabStop, onFocus, onKeyDown };
}
