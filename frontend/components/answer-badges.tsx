/** Small badges under an answer: route, triage and validation results from `done`. */
import type { Badge } from "@/lib/badges";

export function AnswerBadges({ badges }: { badges: Badge[] }) {
  if (badges.length === 0) return null;
  return (
    <ul className="badges" aria-label="Answer information">
      {badges.map((b) => (
        <li key={b.label} className={`badge badge-${b.tone}`} title={b.title}>
          {b.label}
        </li>
      ))}
    </ul>
  );
}
