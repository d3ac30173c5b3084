/** The header of a page beside the chat (back to the chat, the title, the theme toggle), a secret shown once and a failure's message. */
import Link from "next/link";
import { CopyButton } from "./copy-button";
import { ThemeToggle } from "./theme-toggle";

export function PageHeader({ title }: { title: string }) {
  return (
    <header className="docs-header">
      <Link href="/" className="nav-link">
        ← Chat
      </Link>
      <h1>{title}</h1>
      <ThemeToggle />
    </header>
  );
}

/** A secret the server shows only once (an API key, an invitation link), with a Copy button. */
export function ShownOnce({ label, text }: { label: string; text: string }) {
  return (
    <div className="shown-once" role="status">
      <span>{label}</span>
      <code data-secret>{text}</code>
      <CopyButton text={text} />
    </div>
  );
}

/** A failure's message from the server, announced to screen readers; nothing when there is none. */
export function Failure({ error }: { error: string | null }) {
  return error ? (
    <p className="auth-error" role="alert">
      {error}
    </p>
  ) : null;
}

/** Runs an action, reporting its failure through `onError` (the server's detail) and its end through `onDone`. */
export function attempt(
  action: () => Promise<unknown>,
  onError: (message: string | null) => void,
  onDone?: () => unknown,
): Promise<void> {
  onError(null);
  return action().then(
    () => void onDone?.(),
    (e: unknown) => onError(e instanceof Error ? e.message : String(e)),
  );
}
