/**
 * Failures, each on its own backend so the shared one keeps running: the backend down before a
 * question, the connection dropping mid-answer with the backend not coming back, and an `event: error` from the model.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ChatPage } from "../pages/chat-page";
import { expect, test } from "./fixtures";
import {
  type Backend,
  Backend as BackendServer,
  type Frontend,
  freePort,
  removeDir,
  startBackend,
  startFrontend,
} from "./stack";

test.describe.configure({ mode: "serial" });

let backend: Backend;
let frontend: Frontend;

test.beforeAll(async () => {
  backend = await startBackend(process.env.E2E_TEMPLATE_DIR!, { RAG_FAKE_TOKENS_PER_SECOND: "8" });
  frontend = await startFrontend(backend.url);
});

test.afterAll(async () => {
  await frontend?.stop();
  await backend?.stop();
  removeDir(backend?.dataDir);
});

test("backend down: a clear message, the question kept, and Retry works once it is back", async ({ page }) => {
  const chat = new ChatPage(page);
  await page.goto(frontend.url);
  await expect(chat.composer).toBeVisible();
  await backend.stop();

  await chat.ask("What is the notice period?");
  const answer = chat.lastAnswer();
  await expect(answer.root).toHaveAttribute("data-state", "error");
  await expect(answer.error).toContainText("not reachable");
  await expect(answer.retryButton).toBeVisible();
  await expect(chat.composer).toHaveValue("What is the notice period?");
  await expect(chat.banner).toContainText("not reachable");
  await chat.screenshot("error-backend-down");

  await backend.start();
  // The page asks again by itself while the backend is unreachable: the banner goes, the sidebar's list comes back.
  await expect(chat.banner).toHaveCount(0, { timeout: 15_000 });
  await expect(page.getByText("Conversations are unavailable")).toHaveCount(0);
  await answer.retryButton.click();
  await expect(chat.composer).toHaveValue("");
  const retried = await chat.waitForAnswerDone();
  await expect(retried.text).toContainText("notice period");
  await expect(chat.answers()).toHaveCount(1);
  await expect(chat.banner).toHaveCount(0);
});

test("backend down when the page opens: it says so, asks again by itself, and shows the chat once it is back", async ({
  page,
}) => {
  const chat = new ChatPage(page);
  await backend.stop();
  await page.goto(frontend.url);
  await expect(chat.banner).toContainText("not reachable");
  await expect(chat.banner.getByRole("button", { name: "Check again" })).toBeVisible();
  await expect(chat.composer).toHaveCount(0);

  await backend.start();
  // no reload: the page was a dead end until one (tester)
  await expect(chat.composer).toBeVisible({ timeout: 15_000 });
  await expect(chat.banner).toHaveCount(0);
  await chat.ask("What is the notice period?");
  const answer = await chat.waitForAnswerDone();
  await expect(answer.text).toContainText("notice period");
});

test("connection drop mid-answer and the backend stays away: the page reconnects for a minute, then the partial text stays and the error says what happened", async ({
  page,
}) => {
  const chat = new ChatPage(page);
  await page.clock.install(); // time runs as usual until the minute of reconnecting is skipped below
  await page.goto(frontend.url);
  await chat.ask("What does servicing a second Zephyr-9 unit in the same visit cost?");
  const answer = chat.lastAnswer();
  await expect.poll(() => answer.textLength()).toBeGreaterThan(10);
  await backend.stop();

  await expect(answer.reconnecting).toBeVisible();
  await expect(answer.root).toHaveAttribute("data-state", "streaming");
  await page.clock.fastForward("01:01");
  await expect(answer.root).toHaveAttribute("data-state", "error");
  await expect(answer.error).toContainText(/connection|ended before/i);
  expect(await answer.textLength()).toBeGreaterThan(10);
  await expect(chat.composer).toHaveValue("What does servicing a second Zephyr-9 unit in the same visit cost?");

  await backend.start();
  await answer.retryButton.click();
  await chat.waitForAnswerDone();
  await expect(chat.lastAnswer().text).toContainText("According to the documents");
});

test("an `event: error` from the model is shown with its message", async ({ page }) => {
  // A backend whose model host is a closed port: the turn fails with `event: error` (model_unreachable).
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "ragline-e2e-ollama-"));
  const broken = new BackendServer(await freePort(), dataDir, {
    RAG_LLM_BACKEND: "ollama",
    RAG_OLLAMA_BASE_URL: `http://127.0.0.1:${await freePort()}`,
  });
  await broken.start();
  const ui = await startFrontend(broken.url);
  try {
    const chat = new ChatPage(page);
    await page.goto(ui.url);
    await chat.setMode("Chat");
    // Not "Tell me something interesting": the injection classifier blocks that one (a known false positive).
    await chat.ask("Write a short poem about the sea");
    const answer = chat.lastAnswer();
    await expect(answer.root).toHaveAttribute("data-state", "error");
    await expect(answer.error).toContainText("model_unreachable");
    await expect(answer.error).toContainText("Could not reach");
    await expect(answer.retryButton).toBeVisible();
    await expect(chat.composer).toHaveValue("Write a short poem about the sea");
    await chat.screenshot("error-event");
  } finally {
    await ui.stop();
    await broken.stop();
    removeDir(dataDir);
  }
});
