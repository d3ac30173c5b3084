/** Small badges from a `done` event's triage and validation information, when the backend sends it. */
import type { Triage, Validation } from "./types";

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
  const unsupported = sources?.unsupported?.length ?? 0;
  if (unsupported > 0) {
    out.push({
      label: unsupported === 1 ? "1 claim not in the sources" : `${unsupported} claims not in the sources`,
      tone: "warn",
      title: "Underlined sentences state facts that no cited passage supports",
    });
  }
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

/** What badges are made from: a `done` event, or what a stored turn kept of it. */
export interface AnswerInfo {
  intent?: string | null;
  route_reason?: string | null;
  triage?: Triage | null;
  validation?: Validation | null;
}

/** Badges for an answer: its route (documents or chat) plus whatever triage and validation report. */
export function badgesFromDone(done: AnswerInfo | null | undefined): Badge[] {
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
