"use client";
/** The live status of a turn: each graph step as it starts and ends, with elapsed times. */
import type { StatusStep } from "@/hooks/use-chat";
import { formatSeconds, useElapsed } from "@/hooks/use-elapsed";

const clean = (label: string) => label.replace(/…$/, "");
const isWarning = (step: StatusStep) =>
  /no document|matches several|not found|failed/i.test(`${step.note ?? step.label} ${step.detail ?? ""}`);

function Step({ step, running }: { step: StatusStep; running: boolean }) {
  const open = running && step.endedAt === undefined;
  const elapsed = useElapsed(step.startedAt, open);
  const ms = step.endedAt !== undefined ? step.endedAt - step.startedAt : elapsed;
  const state = open ? "running" : step.endedAt === undefined ? "interrupted" : isWarning(step) ? "warn" : "ok";
  return (
    <li className={`step step-${state}`} data-node={step.node} title={step.detail ?? undefined}>
      <span className="step-icon" aria-hidden>
        {state === "running" ? <span className="spinner" /> : state === "warn" ? "!" : state === "ok" ? "✓" : "–"}
      </span>
      <span className="step-label">{open ? step.label : (step.note ?? clean(step.label))}</span>
      {step.detail && <span className="step-detail">{step.detail}</span>}
      <span className="step-time">{formatSeconds(ms)}</span>
    </li>
  );
}

export function StatusTimeline({
  steps,
  running,
  startedAt,
  endedAt,
}: {
  steps: StatusStep[];
  running: boolean;
  startedAt?: number;
  endedAt?: number;
}) {
  const elapsed = useElapsed(startedAt, running);
  const total = endedAt !== undefined && startedAt !== undefined ? endedAt - startedAt : elapsed;
  const current = [...steps].reverse().find((s) => s.endedAt === undefined);
  return (
    <div className="status" data-running={running || undefined}>
      <div className="status-line" role="status" aria-live="polite">
        {running ? (
          <>
            <span className="spinner" aria-hidden />
            <span className="status-current">{current ? current.label : "Connecting…"}</span>
          </>
        ) : (
          <span className="status-current">{steps.length} steps</span>
        )}
        <span className="status-total">{formatSeconds(total)}</span>
      </div>
      {steps.length > 0 && (
        <ol className="steps" aria-label="Steps">
          {steps.map((step, i) => (
            <Step key={`${step.node}-${i}`} step={step} running={running} />
          ))}
        </ol>
      )}
    </div>
  );
}
