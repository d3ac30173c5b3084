"use client";
/**
 * A turn's status in one line: while it runs, what is happening now with the elapsed time; once it has ended, a
 * summary ("3 passages from 2 documents · 6.2 s", "Answered from the FAQ · employee-handbook.md", "Stopped before
 * sources were listed · 8 passages found") that expands to the full timeline of steps.
 */
import { useId, useState } from "react";
import type { StatusStep } from "@/hooks/use-chat";
import { formatSeconds, useElapsed } from "@/hooks/use-elapsed";
import { type EndedTurn, liveLabel, summaryLine } from "@/lib/turn-summary";
import type { Source, Triage } from "@/lib/types";

const RECONNECTING = "Reconnecting to the server…";
const clean = (label: string) => label.replace(/…$/, "");
const isWarning = (step: StatusStep) =>
  /no document|matches several|not found|failed/i.test(`${step.note ?? step.label} ${step.detail ?? ""}`);

function Step({ step, timed }: { step: StatusStep; timed: boolean }) {
  const state = step.endedAt === undefined || step.unfinished ? "interrupted" : isWarning(step) ? "warn" : "ok";
  return (
    <li className={`step step-${state}`} data-node={step.node || undefined} title={step.detail ?? undefined}>
      <span className="step-icon" aria-hidden>
        {state === "warn" ? "!" : state === "ok" ? "✓" : "–"}
      </span>
      <span className="step-label">{step.note ?? clean(step.label)}</span>
      {step.detail && <span className="step-detail">{step.detail}</span>}
      {timed && step.endedAt !== undefined && (
        <span className="step-time">{formatSeconds(step.endedAt - step.startedAt)}</span>
      )}
    </li>
  );
}

/** The one live line of a running turn; while the page re-attaches after a lost connection, it says so. */
function LiveLine({
  steps,
  content,
  startedAt,
  reconnecting,
}: {
  steps: StatusStep[];
  content: string;
  startedAt?: number;
  reconnecting?: boolean;
}) {
  const elapsed = useElapsed(startedAt, true);
  return (
    <div className="status" data-running data-reconnecting={reconnecting || undefined}>
      <div className="status-line">
        <span className="spinner" aria-hidden />
        <span className="status-current" role="status" aria-live="polite">
          {reconnecting ? RECONNECTING : liveLabel(steps, content)}
        </span>
        <span className="status-total">{formatSeconds(elapsed)}</span>
      </div>
    </div>
  );
}

/** The summary of an ended turn; its button shows and hides the steps. */
function Summary({ turn, seconds }: { turn: EndedTurn; seconds?: string }) {
  const [open, setOpen] = useState(false);
  const listId = useId();
  const line = summaryLine(turn, seconds);
  const steps = turn.steps;
  if (steps.length === 0) {
    return (
      <div className="status">
        <div className="status-line">
          <span className="status-summary">{line}</span>
        </div>
      </div>
    );
  }
  return (
    <div className="status">
      <div className="status-line">
        <button
          type="button"
          className="status-summary status-toggle"
          aria-expanded={open}
          aria-controls={listId}
          onClick={() => setOpen((o) => !o)}
        >
          <span className="status-caret" aria-hidden>
            {open ? "▾" : "▸"}
          </span>
          {line}
        </button>
      </div>
      {open && (
        <ol className="steps" id={listId} aria-label="Steps">
          {steps.map((step, i) => (
            <Step key={`${step.node}-${i}`} step={step} timed={seconds !== undefined} />
          ))}
        </ol>
      )}
    </div>
  );
}

export function StatusTimeline({
  steps,
  running,
  content,
  sources,
  triage,
  cut,
  startedAt,
  endedAt,
  reconnecting,
}: {
  steps: StatusStep[];
  running: boolean;
  content: string;
  sources?: Source[];
  /** How the turn was routed: an answer from the FAQ names the FAQ entry's documents. */
  triage?: Triage | null;
  cut?: EndedTurn["cut"];
  startedAt?: number;
  endedAt?: number;
  /** Running, but the connection is lost and the page is re-attaching. */
  reconnecting?: boolean;
}) {
  if (running) return <LiveLine steps={steps} content={content} startedAt={startedAt} reconnecting={reconnecting} />;
  const seconds = startedAt !== undefined && endedAt !== undefined ? formatSeconds(endedAt - startedAt) : undefined;
  return <Summary turn={{ steps, sources, triage, cut }} seconds={seconds} />;
}
