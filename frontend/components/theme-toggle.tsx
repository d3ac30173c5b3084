"use client";
import { useTheme } from "@/hooks/use-theme";

const LABEL = { system: "Theme: system", dark: "Theme: dark", light: "Theme: light" } as const;

export function ThemeToggle() {
  const { theme, cycle } = useTheme();
  return (
    <button type="button" className="tool-button theme-toggle" onClick={cycle} data-theme-choice={theme}>
      {LABEL[theme]}
    </button>
  );
}
