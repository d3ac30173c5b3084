import fs from "node:fs";
import path from "node:path";
import { backendUrl, expect, test } from "./fixtures";
import { LOG_DIR } from "./stack";

const backendLog = () => {
  const file = path.join(LOG_DIR, `backend-${new URL(backendUrl()).port}.log`);
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
};
const cancellations = () => backendLog().split("client disconnected; turn cancelled").length - 1;

test("Stop aborts the stream; the partial answer stays, marked as stopped", async ({ chat, page, request }) => {
  await chat.goto();
  const cancelledBefore = cancellations();
  await chat.ask("What does the IT security policy say about passwords and laptops?");
  const answer = chat.lastAnswer();
  await expect.poll(() => answer.textLength()).toBeGreaterThan(15);
  await chat.stopButton.click();

  await expect(answer.root).toHaveAttribute("data-state", "stopped");
  await expect(answer.stoppedNote).toBeVisible();
  const partial = await answer.text.innerText();
  expect(partial.length).toBeGreaterThan(15);
  await page.waitForTimeout(1000);
  expect(await answer.text.innerText()).toBe(partial);
  await expect(chat.sendButton).toBeVisible();

  // The abort reached the backend through the proxy, which cancelled the turn (and the model request) ...
  await expect.poll(cancellations).toBe(cancelledBefore + 1);
  // ... and did not commit it: the thread holds no half answer.
  const threadId = chat.threadIdFromUrl();
  expect(threadId).toBeTruthy();
  const res = await request.get(`${backendUrl()}/api/threads/${threadId}`);
  expect(res.status()).toBe(404);
});

test("Esc stops a streaming answer from the keyboard", async ({ chat, page }) => {
  await chat.goto();
  await chat.ask("What does servicing a second Zephyr-9 unit in the same visit cost?");
  const answer = chat.lastAnswer();
  await expect.poll(() => answer.textLength()).toBeGreaterThan(5);
  await page.keyboard.press("Escape");
  await expect(answer.root).toHaveAttribute("data-state", "stopped");
  // The composer works again right away.
  await chat.ask("hello");
  await chat.waitForAnswerDone();
});
