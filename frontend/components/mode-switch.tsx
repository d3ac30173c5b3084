"use client";
/** auto / documents only / chat only: the `mode` sent with each turn. */
import type { Mode } from "@/lib/types";

const MODES: { value: Mode; label: string; title: string }[] = [
  { value: "auto", label: "Auto", title: "Ragline decides whether to search the documents" },
  { value: "rag", label: "Documents", title: "Always answer from the documents" },
  { value: "chat", label: "Chat", title: "Plain chat, no document search" },
];

export function ModeSwitch({ mode, onChange }: { mode: Mode; onChange: (mode: Mode) => void }) {
  return (
    <div className="mode-switch" role="radiogroup" aria-label="Answer mode">
      {MODES.map((m) => (
        <button
          key={m.value}
          type="button"
          role="radio"
          aria-checked={mode === m.value}
          title={m.title}
          data-mode={m.value}
          onClick={() => onChange(m.value)}
          onKeyDown={(e) => {
            const i = MODES.findIndex((x) => x.value === mode);
            if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
              e.preventDefault();
              const next = MODES[(i + (e.key === "ArrowRight" ? 1 : MODES.length - 1)) % MODES.length];
              onChange(next.value);
              (e.currentTarget.parentElement?.querySelector(`[data-mode="${next.value}"]`) as HTMLElement)?.focus();
            }
          }}
          tabIndex={mode === m.value ? 0 : -1}
        >
          {m.label}
        </button>
      ))}
    </div>
  );
}
