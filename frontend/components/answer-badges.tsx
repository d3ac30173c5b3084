/** Small badges under an answer: route, triage and validation results from `done`. */
import type { Badge } from "@/lib/badges";

/**
 * A badge with a reason (why an answer is "not in the documents", say) takes the focus: the keyboard reaches the
 * reason, shown beside it while focused, and a screen reader reads it as the badge's description (its title), which
 * a mouse alone could reach before.
 */
export function AnswerBadges({ badges }: { badges: Badge[] }) {
  if (badges.length === 0) return null;
  return (
    <ul className="badges" aria-label="Answer information">
      {badges.map((b) => (
        <li
          key={b.label}
          className={`badge badge-${b.tone}`}
          title={b.title}
          tabIndex={b.title ? 0 : undefined}
          data-reason={b.title || undefined}
        >
          {b.label}
        </li>
      ))}
    </ul>
  );
}
