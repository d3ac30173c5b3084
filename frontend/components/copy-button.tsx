"use client";
/** Copies text to the clipboard; falls back to a hidden textarea where the Clipboard API is unavailable (plain http). */
import { useState } from "react";

async function copy(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <button
      type="button"
      className="tool-button"
      onClick={() =>
        copy(text)
          .then(
            () => setState("copied"),
            () => setState("failed"),
          )
          .finally(() => setTimeout(() => setState("idle"), 1500))
      }
    >
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : label}
    </button>
  );
}
