"use client";
/** Light / dark / system theme, stored in localStorage and applied as <html data-theme>. */
import { useCallback, useEffect, useState } from "react";

import { THEME_KEY } from "@/lib/theme";

export type ThemeChoice = "light" | "dark" | "system";

export function useTheme(): { theme: ThemeChoice; cycle: () => void } {
  const [theme, setTheme] = useState<ThemeChoice>("system");

  useEffect(() => {
    const stored = localStorage.getItem(THEME_KEY);
    if (stored === "light" || stored === "dark") setTheme(stored);
  }, []);

  const cycle = useCallback(() => {
    setTheme((current) => {
      const next: ThemeChoice = current === "system" ? "dark" : current === "dark" ? "light" : "system";
      if (next === "system") {
        localStorage.removeItem(THEME_KEY);
        delete document.documentElement.dataset.theme;
      } else {
        localStorage.setItem(THEME_KEY, next);
        document.documentElement.dataset.theme = next;
      }
      return next;
    });
  }, []);

  return { theme, cycle };
}
