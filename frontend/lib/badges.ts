/** Small badges from a `done` event's triage and validation information, when the backend sends it. */
import type { DoneEvent, Triage, Validation } from "./types";

export interface Badge {
  label: string;
  tone: "info" | "good" | "warn";
  title?: string;
}

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

function triageBadges(triage: Triage): Badge[] {
  const route = triage.route;
  if (!route) return [];
  return [ROUTE_LABELS[route] ?? { label: route.replace(/_/g, " "), tone: "info", title: "triage" }];
}

function validationBadges(validation: Validation): Badge[] {
  const out: Badge[] = [];
  const sources = validation.sources;
  if (sources && Number.isFinite(sources.confidence)) {
    out.push({
      label: `grounded ${sources.confidence.toFixed(2)}`,
      tone: sources.grounded ? "good" : "warn",
      title: sources.grounded
        ? "every claim is supported by its sources"
        : "some sentences are not supported by the sources",
    });
  }
  if (validation.input?.categories.some((c) => c.startsWith("pii:"))) {
    out.push({ label: "PII redacted", tone: "warn" });
  }
  const output = validation.output_guardrail;
  if (output && !output.safe) {
    out.push({ label: "answer adjusted", tone: "warn", title: output.issues.join(", ") || undefined });
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
  if (done.triage) out.push(...triageBadges(done.triage));
  if (done.validation) out.push(...validationBadges(done.validation));
  return out;
}
