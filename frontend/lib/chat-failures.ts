/** Which thread the next question goes to after a thread could not be read or asked on: plain data, no React. */
import { ApiError } from "./sse";

/**
 * The notice of a conversation that does not exist for this user: deleted, its first answer never stored, or
 * another user's (the server answers all three with the same 404, on purpose).
 */
export const MISSING_THREAD =
  "This conversation does not exist for you (it may have been deleted, its first answer never finished, or it " +
  "belongs to someone else). Ask something to start a new conversation.";

/** A 404 for the thread itself: asking on that id again would be refused again (another user's thread). */
const missing = (err: unknown) => err instanceof ApiError && err.status === 404;

/**
 * Loading thread `id` failed: the notice to show and the thread the next question goes to. A thread that does not
 * exist for this user is left (null: the next question starts a new conversation under a fresh id); after any other
 * failure (server down, a 500) it is kept, since asking on it may well work.
 */
export function afterLoadFailure(id: string, err: unknown): { notice: string; threadId: string | null } {
  if (missing(err)) return { notice: MISSING_THREAD, threadId: null };
  return {
    notice: `Could not load this conversation: ${err instanceof Error ? err.message : String(err)}`,
    threadId: id,
  };
}

/**
 * Whether a question's failure means its thread does not exist for this user: the ask itself was refused with a
 * 404 before the run started (`started`: its first event came; a 404 after that is a run's log, not the thread).
 */
export function askedOnMissingThread(err: unknown, started: boolean): boolean {
  return !started && missing(err);
}

/**
 * Whether a Stop the server refused leaves the page to stop following the run itself: yes when the server could
 * not be told (down, a 5xx), no for a 409, the run having ended meanwhile, whose last events (its answer) are on
 * their way; stopping there showed a finished answer as "Stopped", with a Retry that asked it again.
 */
export const stopLeftToPage = (err: unknown) => !(err instanceof ApiError && err.status === 409);
