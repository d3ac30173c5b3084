/** One shared stack for the suite: sample corpus ingested, fake model at 20 tokens/s, built frontend. */
import fs from "node:fs";
import type { FullConfig } from "@playwright/test";
import { type Frontend, LOG_DIR, SCREENSHOTS, ingestTemplate, removeDir, startBackend, startFrontend } from "./stack";

export const TOKENS_PER_SECOND = "20";

export default async function globalSetup(_config: FullConfig): Promise<() => Promise<void>> {
  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const template = ingestTemplate();
  const backend = await startBackend(template, { RAG_FAKE_TOKENS_PER_SECOND: TOKENS_PER_SECOND });
  let frontend: Frontend;
  try {
    frontend = await startFrontend(backend.url);
  } catch (err) {
    await backend.stop();
    removeDir(backend.dataDir);
    removeDir(template);
    throw err;
  }
  process.env.E2E_BASE_URL = frontend.url;
  process.env.E2E_BACKEND_URL = backend.url;
  process.env.E2E_TEMPLATE_DIR = template;
  return async () => {
    await frontend.stop();
    await backend.stop();
    removeDir(backend.dataDir);
    removeDir(template);
  };
}
