/** Small badges from a `done` event's triage and validation information, when the backend sends it. */
import type { DoneEvent } from "./types";

export interface Badge {
  label: string;
  tone: "info" | "good" | "warn";
  title?: string;
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

const ROUTE_LABELS: Record<string, Badge> = {
  faq: { label: "answered from FAQ", tone: "info" },
  blocked: { label: "blocked by guardrail", tone: "warn" },
  off_topic: { label: "outside the documents", tone: "info" },
  mention: { label: "unknown document", tone: "warn" },
  greeting: { label: "small talk", tone: "info" },
  thanks: { label: "small talk", tone: "info" },
  chitchat: { label: "small talk", tone: "info" },
  goodbye: { label: "small talk", tone: "info" },
};

function triageBadges(triage: Record<string, unknown>): Badge[] {
  const route = typeof triage.route === "string" ? triage.route : "";
  if (!route) return [];
  return [ROUTE_LABELS[route] ?? { label: route.replace(/_/g, " "), tone: "info", title: "triage" }];
}

function validationBadges(validation: Record<string, unknown>): Badge[] {
  const out: Badge[] = [];
  const sources = obj(validation.sources);
  const confidence = num(sources?.confidence);
  if (sources && confidence !== undefined) {
    const grounded = sources.grounded === true;
    out.push({
      label: `grounded ${confidence.toFixed(2)}`,
      tone: grounded ? "good" : "warn",
      title: grounded ? "every claim is supported by its sources" : "some sentences are not supported by the sources",
    });
  }
  const input = obj(validation.input);
  const categories = Array.isArray(input?.categories) ? (input?.categories as unknown[]) : [];
  if (categories.some((c) => typeof c === "string" && c.startsWith("pii:"))) {
    out.push({ label: "PII redacted", tone: "warn" });
  }
  const output = obj(validation.output_guardrail);
  if (output && output.safe === false) {
    const issues = Array.isArray(output.issues) ? output.issues.join(", ") : undefined;
    out.push({ label: "answer adjusted", tone: "warn", title: issues });
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
