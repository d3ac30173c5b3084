/** Small badges from a `done` event's triage and validation information, when the backend sends it. */
import type { DoneEvent } from "./types";

export interface Badge {
  label: string;
  tone: "info" | "good" | "warn";
  title?: string;
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function triageBadges(triage: Record<string, unknown>): Badge[] {
  const out: Badge[] = [];
  const route = [triage.route, triage.source, triage.path, triage.kind, triage.category].find(
    (v): v is string => typeof v === "string" && v.length > 0,
  );
  if (triage.faq === true || route?.toLowerCase() === "faq") {
    out.push({ label: "answered from FAQ", tone: "info" });
  } else if (route) {
    out.push({ label: route.replace(/_/g, " "), tone: "info", title: "triage" });
  }
  return out;
}

function validationBadges(validation: Record<string, unknown>): Badge[] {
  const out: Badge[] = [];
  const grounded = num(validation.grounded) ?? num(validation.groundedness) ?? num(validation.grounded_score);
  if (grounded !== undefined) {
    out.push({ label: `grounded ${grounded.toFixed(2)}`, tone: grounded >= 0.7 ? "good" : "warn" });
  } else if (typeof validation.grounded === "boolean") {
    out.push({ label: validation.grounded ? "grounded" : "not grounded", tone: validation.grounded ? "good" : "warn" });
  }
  if (validation.pii_redacted === true || num(validation.pii_redacted)) {
    out.push({ label: "PII redacted", tone: "warn" });
  }
  if (validation.passed === false || validation.valid === false) {
    const reason = typeof validation.reason === "string" ? validation.reason : undefined;
    out.push({ label: "failed validation", tone: "warn", title: reason });
  }
  return out;
}

/** Badges for an answer: its route (documents or chat) plus whatever triage and validation report. */
export function badgesFromDone(done: DoneEvent | null | undefined): Badge[] {
  if (!done) return [];
  const out: Badge[] = [];
  if (done.intent) {
    out.push({
      label: done.intent === "rag" ? "from documents" : done.intent === "chat" ? "chat" : done.intent,
      tone: "info",
      title: done.route_reason || undefined,
    });
  }
  if (done.triage && typeof done.triage === "object") out.push(...triageBadges(done.triage));
  if (done.validation && typeof done.validation === "object") out.push(...validationBadges(done.validation));
  return out;
}
