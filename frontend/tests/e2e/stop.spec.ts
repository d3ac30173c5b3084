import { MID_STREAM, backendUrl, expect, test } from "./fixtures";

/** About 44 tokens from the fake model (some 2 s at 20 tokens/s): a short answer can end before Stop lands. */
const LONG_ANSWER =
  "Tell me about laptops, passwords, hotel limits, meal allowances, expense reports, notice periods and Zephyr-9 servicing costs.";

test("Stop cancels the run on the server; the partial answer stays in the thread, marked as stopped", async ({
  chat,
  page,
  request,
}) => {
  await chat.goto();
  await chat.ask(LONG_ANSWER);
  const answer = chat.lastAnswer();
  await expect.poll(() => answer.textLength(), MID_STREAM).toBeGreaterThan(15);
  await chat.stopButton.click();

  await expect(answer.root).toHaveAttribute("data-state", "stopped");
  await expect(answer.stoppedNote).toBeVisible();
  const partial = await answer.text.innerText();
  expect(partial.length).toBeGreaterThan(15);
  await page.waitForTimeout(1000);
  expect(await answer.text.innerText()).toBe(partial);
  await expect(chat.sendButton).toBeVisible();

  // The server stopped the run and kept its partial answer, marked stopped ...
  const threadId = chat.threadIdFromUrl();
  expect(threadId).toBeTruthy();
  const res = await request.get(`${backendUrl()}/api/threads/${threadId}`);
  expect(res.status()).toBe(200);
  const thread = await res.json();
  expect(thread.active_run).toBeNull();
  expect(thread.messages.at(-1).status).toBe("stopped");
  // ... which a reload shows as stopped too.
  await page.reload();
  await expect(chat.lastAnswer().root).toHaveAttribute("data-state", "stopped");
});

test("Esc stops a streaming answer from the keyboard", async ({ chat, page }) => {
  await chat.goto();
  await chat.ask(LONG_ANSWER);
  const answer = chat.lastAnswer();
  await expect.poll(() => answer.textLength(), MID_STREAM).toBeGreaterThan(5);
  await page.keyboard.press("Escape");
  await expect(answer.root).toHaveAttribute("data-state", "stopped");
  // The composer works again right away.
  await chat.ask("hello");
  await chat.waitForAnswerDone();
});
