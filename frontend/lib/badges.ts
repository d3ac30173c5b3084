/** Small badges from a `done` event's triage and validation information, when the backend sends it. */
import type { Scope, Triage, Validation } from "./types";

export interface Badge {
  label: string;
  tone: "info" | "good" | "warn";
  title?: string;
}

const SMALL_TALK: Badge = {
  label: "small talk",
  tone: "info",
  title: "A greeting or a thank-you: answered at once, without searching the documents or asking the model.",
};
const ROUTE_LABELS: Record<string, Badge> = {
  faq: {
    label: "answered from FAQ",
    tone: "info",
    title: "A curated FAQ answer matched this question: the model did not write it. Its citations open the passages.",
  },
  blocked: {
    label: "blocked by guardrail",
    tone: "warn",
    title: "The input guardrail stopped this message before it reached the model.",
  },
  off_topic: {
    label: "outside the documents",
    tone: "info",
    title: "The question is outside what the documents cover, so the model was not asked.",
  },
  mention: { label: "unknown document", tone: "warn", title: "An @mention named no document you can read." },
  greeting: SMALL_TALK,
  thanks: SMALL_TALK,
  chitchat: SMALL_TALK,
  goodbye: SMALL_TALK,
};

/**
 * The router's notes on @mentions that named no one document (backend/rag/mentions.py, Resolution.notes), which a
 * "mention" answer gives as its reply and its route_reason: '"@x" matches several documents: a, b' for an
 * ambiguous one, 'No document matches "@x"' for an unknown one.
 */
const AMBIGUOUS_NOTE = /"@[^"]*" matches several documents/;
const UNKNOWN_NOTE = /No document matches "@/;

/** An answered-at-once "mention" route: an ambiguous mention is not an unknown one (tester: "@expense-rules"). */
function mentionBadge(notes: string): Badge {
  const ambiguous = AMBIGUOUS_NOTE.test(notes);
  if (!ambiguous) return ROUTE_LABELS.mention;
  return UNKNOWN_NOTE.test(notes)
    ? {
        label: "unknown or ambiguous document",
        tone: "warn",
        title: "One @mention named no document you can read, another more than one: type @ and pick from the list.",
      }
    : {
        label: "ambiguous document",
        tone: "warn",
        title: "An @mention matches more than one document: type @ and pick the one you mean from the list.",
      };
}

function triageBadges(triage: Triage, routeReason: string): Badge[] {
  const route = triage.route;
  if (!route) return [];
  if (route === "mention") return [mentionBadge(`${routeReason} ${triage.early_response}`)];
  return [ROUTE_LABELS[route] ?? { label: route.replace(/_/g, " "), tone: "info", title: "triage" }];
}

type SourcesCheck = NonNullable<Validation["sources"]>;

/** Why the answer says the documents do not contain it, in the reader's words. */
function notFoundWhy(sources: SourcesCheck): string {
  if (sources.not_found === "no_passages") {
    return sources.not_found_reason === "unsupported"
      ? "No passage matched the question, and the model's answer gave a number or code from none of them: it was withheld."
      : "No passage matched the question, so the answer does not come from your documents.";
  }
  switch (sources.not_found_reason) {
    case "unsupported":
      return "No passage supported what the model wrote, so it was replaced.";
    case "unanswered":
      return "The model judged that the passages do not state the answer, so its answer was replaced.";
    case "wrong_kind":
      return `The question asks for ${sources.asked_for ?? "something"} and the model's answer gave none, so it was replaced.`;
    case "unstated_premise":
      return `The model's answer used the question's words (${(sources.unstated ?? []).join(", ")}) where no passage does, so it was replaced.`;
    case "restates_question":
      return "The model's answer only restated the question, so it was replaced.";
    default:
      return "The model found no answer in the passages.";
  }
}

function validationBadges(validation: Validation): Badge[] {
  const out: Badge[] = [];
  const sources = validation.sources;
  if (sources?.not_found) {
    // the grounding score belongs to the text that was replaced, not to the not-found reply the reader sees
    out.push({ label: "not in the documents", tone: "info", title: notFoundWhy(sources) });
  }
  const unsupported = sources?.unsupported?.length ?? 0;
  if (unsupported > 0) {
    out.push({
      label: unsupported === 1 ? "1 claim not in the sources" : `${unsupported} claims not in the sources`,
      tone: "warn",
      title: "Underlined sentences state facts that no cited passage supports",
    });
  }
  // an answer that states nothing ("Yes, I am sure.": 0 claims) has nothing to be grounded in: no score
  if (sources && !sources.not_found && sources.claims !== 0 && Number.isFinite(sources.confidence)) {
    out.push({
      label: `grounded ${sources.confidence.toFixed(2)}`,
      tone: sources.grounded ? "good" : "warn",
      title: sources.grounded
        ? "every claim is supported by its sources"
        : "some sentences are not supported by the sources",
    });
  }
  const conflicts = sources?.conflicts ?? [];
  if (conflicts.length > 0) {
    out.push({
      label: "different figure elsewhere",
      tone: "warn",
      title: `Another document given to the model gives a different figure for something similar (${conflicts
        .map((c) => c.source)
        .join(", ")}): the answer's last paragraph quotes it; check which applies.`,
    });
  }
  // of the answer shown: the server says false when the checks replaced the cut answer by a whole reply
  if (validation.length?.cut) {
    out.push({
      label: "cut short",
      tone: "warn",
      title: `The answer reached its length limit (${validation.length.max_tokens} tokens) and stops mid-way: ask for one part of it at a time.`,
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

/** What a documents answer searched: the @-mentioned documents (or those a follow-up kept), or all of them. */
export function searched(scope: Scope | null | undefined): string {
  const names = scope?.documents ?? [];
  if (names.length === 0) return "searched the documents";
  const what = names.length <= 2 ? names.join(" and ") : `${names.length} documents`;
  return `searched only ${what}${scope?.source === "carried" ? " (follow-up)" : ""}`;
}

/** What badges are made from: a `done` event, or what a stored turn kept of it. */
export interface AnswerInfo {
  intent?: string | null;
  route_reason?: string | null;
  scope?: Scope | null;
  triage?: Triage | null;
  validation?: Validation | null;
}

/**
 * Badges for an answer: its route (the documents searched, or chat) plus whatever triage and validation report.
 * An answer the triage gave (FAQ, small talk, a block) took no route, so it shows the triage's badge alone.
 */
export function badgesFromDone(done: AnswerInfo | null | undefined): Badge[] {
  if (!done) return [];
  const out: Badge[] = [];
  if (done.intent && !done.triage?.route) {
    out.push({
      // "searched", not "from": the search may find nothing, and the answer then says so ("not in the documents")
      label: done.intent === "rag" ? searched(done.scope) : done.intent === "chat" ? "chat" : done.intent,
      tone: "info",
      title: done.route_reason || undefined,
    });
  }
  if (done.triage) out.push(...triageBadges(done.triage, done.route_reason ?? ""));
  if (done.validation) out.push(...validationBadges(done.validation));
  return out;
}
