/** The e2e `test` with page objects as fixtures, and helpers to reach the shared backend directly. */
import { test as base, expect } from "@playwright/test";
import { ChatPage } from "../pages/chat-page";
import { DocumentsPage } from "../pages/documents-page";

export const test = base.extend<{ chat: ChatPage; documents: DocumentsPage }>({
  chat: async ({ page }, use) => use(new ChatPage(page)),
  documents: async ({ page }, use) => use(new DocumentsPage(page)),
});

export { expect };

/** The shared backend's URL (for direct checks that bypass the UI). */
export const backendUrl = (): string => process.env.E2E_BACKEND_URL!;

/**
 * Polling for a point inside a streaming answer: every 50 ms, not Playwright's 100/250/500/1000 ms steps, which can
 * step over a whole short answer (20 tokens/s) and find it finished.
 */
export const MID_STREAM = { intervals: [50] };
