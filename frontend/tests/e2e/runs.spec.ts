/**
 * Answers live on the server: a reload at any point of a streaming answer, or a trip to another thread and back,
 * re-attaches to the run and ends with exactly the text of an uninterrupted run (the fake model is deterministic);
 * an answer cut short (Stop, or a restart) stays in its thread with a Retry.
 *
 * On their own stack with the fake model at 6 tokens/s (an answer streams for some 8 s), so that a reload or a Stop
 * lands inside the answer even on a loaded machine; the last test restarts its backend.
 */
import type { Page } from "@playwright/test";
import { AnswerView, ChatPage } from "../pages/chat-page";
import { MID_STREAM, expect, test } from "./fixtures";
import { type Backend, type Frontend, removeDir, startBackend, startFrontend } from "./stack";

/** About 44 tokens from the fake model over the sample documents. */
const QUESTION =
  "Tell me about laptops, passwords, hotel limits, meal allowances, expense reports, notice periods and Zephyr-9 servicing costs.";
test.describe.configure({ mode: "serial" });

let backend: Backend;
let frontend: Frontend;

test.beforeAll(async () => {
  backend = await startBackend(process.env.E2E_TEMPLATE_DIR!, { RAG_FAKE_TOKENS_PER_SECOND: "6" });
  frontend = await startFrontend(backend.url);
});

test.afterAll(async () => {
  await frontend?.stop();
  await backend?.stop();
  removeDir(backend?.dataDir);
});

/** A new chat on this stack asked QUESTION, once its streaming answer shows more than `chars` characters. */
async function askMidAnswer(page: Page, chars: number): Promise<{ chat: ChatPage; answer: AnswerView }> {
  const chat = new ChatPage(page);
  await chat.goto(undefined, frontend.url);
  await chat.ask(QUESTION);
  const answer = chat.lastAnswer();
  await expect.poll(() => answer.textLength(), MID_STREAM).toBeGreaterThan(chars);
  return { chat, answer };
}

/** Rendered text without whitespace: the same answer compares equal however its Markdown wrapped. */
const squash = (text: string) => text.replace(/\s+/g, "");

/** The answer's text as shown, squashed, without the citation previews (whose text changes when sources arrive). */
async function shownText(answer: AnswerView): Promise<string> {
  const text = await answer.text.evaluate((el) => {
    const copy = el.cloneNode(true) as HTMLElement;
    copy.querySelectorAll(".cite-preview").forEach((n) => n.remove());
    return copy.textContent ?? "";
  });
  return squash(text);
}

/** An answer's final text and timeline (node names), as a page shows it. */
interface Seen {
  text: string;
  nodes: string[];
  summary: string;
  state: string;
}

async function finished(answer: AnswerView): Promise<Seen> {
  await expect(answer.root).toHaveAttribute("data-state", /^(done|history)$/, { timeout: 30_000 });
  await answer.showSteps();
  const nodes = await answer.steps.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-node") ?? ""));
  // the time it took is left out: live it is the browser's count, after a reload the server's
  const summary = ((await answer.summary.textContent()) ?? "")
    .replace(/^▸|^▾/, "")
    .trim()
    .replace(/ · [\d.]+ s$/, "");
  return {
    text: await shownText(answer),
    nodes,
    summary,
    state: (await answer.root.getAttribute("data-state"))!,
  };
}

/**
 * The answer's text every 100 ms while it streams, until it ends: each sample must be a prefix of the final text
 * (a replayed token shown twice, or one skipped, breaks that).
 */
async function samplesWhileStreaming(answer: AnswerView, page: Page): Promise<string[]> {
  const samples: string[] = [];
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const state = await answer.root.getAttribute("data-state");
    if (state !== "streaming") break;
    samples.push(await shownText(answer).catch(() => ""));
    await page.waitForTimeout(100);
  }
  return samples;
}

/** A partial text still being written may end in half a Markdown construct ("[S"): compare all but its tail. */
function expectPrefixes(samples: string[], final: string): void {
  for (const sample of samples) expect(final.startsWith(sample.slice(0, Math.max(0, sample.length - 6)))).toBe(true);
}

test.describe("an answer survives reloads", () => {
  let baseline: Seen;
  let stored: Seen;

  test("uninterrupted run of the question (the baseline)", async ({ chat, page }) => {
    await chat.goto(undefined, frontend.url);
    await chat.ask(QUESTION);
    baseline = await finished(chat.lastAnswer());
    expect(baseline.state).toBe("done");
    expect(baseline.text.length).toBeGreaterThan(60);
    expect(baseline.nodes).toEqual(expect.arrayContaining(["router", "retriever", "generator"]));
    // What a reload of a finished answer shows: the stored steps and the summary, with the time it took.
    await page.reload();
    stored = await finished(chat.lastAnswer());
    expect(stored.state).toBe("history");
    expect(stored.text).toBe(baseline.text);
    expect(stored.summary).toBe(baseline.summary);
    await expect(chat.lastAnswer().summary).toHaveText(/ · \d+(\.\d)? s$/);
  });

  for (const [point, fraction] of [
    ["early", 0],
    ["middle", 0.5],
    ["late", 0.85],
  ] as const) {
    test(`reload ${point} in the answer: same final text, no token lost or doubled, timeline intact`, async ({
      chat,
      page,
    }) => {
      await chat.goto(undefined, frontend.url);
      await chat.ask(QUESTION);
      const before = chat.lastAnswer();
      const at = Math.floor(baseline.text.length * fraction);
      await expect.poll(async () => (await shownText(before)).length, MID_STREAM).toBeGreaterThan(at);
      const threadId = chat.threadIdFromUrl();
      expect(threadId).toBeTruthy();

      await page.reload();
      await expect(chat.userMessages()).toHaveText([QUESTION]);
      await expect(chat.answers()).toHaveCount(1);
      const answer = chat.lastAnswer();
      expectPrefixes(await samplesWhileStreaming(answer, page), baseline.text);
      const seen = await finished(answer);
      expect(seen.text).toBe(baseline.text);
      expect(chat.threadIdFromUrl()).toBe(threadId);
      // Re-attached while it ran: the whole timeline replayed from the run log; ended during the reload: the stored one.
      expect(seen.nodes).toEqual(seen.state === "done" ? baseline.nodes : stored.nodes);
      expect(seen.summary.startsWith(stored.summary)).toBe(true);
      test
        .info()
        .annotations.push({ type: "re-attached", description: seen.state === "done" ? "live" : "ended first" });
      // Early and middle leave 4-7 s of answer at 6 tokens/s: the page must have followed the run live.
      if (point !== "late") expect(seen.state).toBe("done");
    });
  }
});

test("switching to another thread and back while an answer streams: the live answer is there and finishes", async ({
  chat,
  page,
  request,
}) => {
  await chat.goto(undefined, frontend.url);
  await chat.ask("hello");
  await chat.waitForAnswerDone();
  const other = chat.threadIdFromUrl()!;
  await page.getByRole("button", { name: "+ New chat" }).click();
  await chat.ask(QUESTION);
  await chat.waitForAnswerDone();
  const thread = chat.threadIdFromUrl()!;
  expect(thread).not.toBe(other);

  const follow = "And what about laptops left in a car?";
  await chat.ask(follow);
  await expect.poll(() => chat.lastAnswer().textLength(), MID_STREAM).toBeGreaterThan(10);
  await chat.threadById(other).locator(".thread-link").click();
  await expect(page).toHaveURL(new RegExp(`thread=${other}`));
  await expect(chat.userMessages()).toHaveText(["hello"]);

  await chat.threadById(thread).locator(".thread-link").click();
  await expect(page).toHaveURL(new RegExp(`thread=${thread}`));
  await expect(chat.userMessages()).toHaveText([QUESTION, follow]);
  await expect(chat.answers()).toHaveCount(2);
  const answer = chat.lastAnswer();
  const samples = await samplesWhileStreaming(answer, page);
  const seen = await finished(answer);
  expect(seen.text.length).toBeGreaterThan(20);
  expectPrefixes(samples, seen.text);
  // The server stored the one answer the page shows, once.
  const body = await (await request.get(`${backend.url}/api/threads/${thread}`)).json();
  expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  expect(squash(body.messages[3].content).length).toBeGreaterThan(0);
});

test("a new thread is in the sidebar while its first answer is written, and deleting it then says why it waits", async ({
  page,
}) => {
  const { chat, answer } = await askMidAnswer(page, 0);
  const row = chat.threadById(chat.threadIdFromUrl()!);
  await expect(row).toBeVisible();
  expect(await answer.root.getAttribute("data-state")).toBe("streaming");
  await row.hover();
  await row.getByRole("button", { name: /^Delete/ }).click();
  await row.getByRole("group", { name: "Confirm delete" }).getByRole("button", { name: "Delete" }).click();
  await expect(row).toContainText("An answer is still being written in this conversation");
  await chat.waitForAnswerDone();
  await expect(row).toBeVisible(); // still there, now stored
});

test("a thread renamed while its first answer is written takes the new title once the answer ends", async ({
  page,
}) => {
  // Tester: the "still being written" message and the open rename box stayed after the answer ended.
  const { chat, answer } = await askMidAnswer(page, 0);
  const row = chat.threadById(chat.threadIdFromUrl()!);
  await row.hover();
  await row.getByRole("button", { name: /^Rename/ }).click();
  await row.getByRole("textbox", { name: "New title" }).fill("Travel and servicing");
  await page.keyboard.press("Enter");
  expect(await answer.root.getAttribute("data-state")).toBe("streaming");
  await expect(row).toContainText("the new title is applied once it ends");
  await chat.waitForAnswerDone();
  await expect(row.locator(".thread-title")).toHaveText("Travel and servicing");
  await expect(row).not.toContainText("still being written");
  await expect(row.getByRole("textbox", { name: "New title" })).toHaveCount(0);
});

test("a rename refused while the answer is written and then dropped with Escape is not applied later", async ({
  page,
}) => {
  const { chat } = await askMidAnswer(page, 0);
  const row = chat.threadById(chat.threadIdFromUrl()!);
  const title = (await row.locator(".thread-title").textContent())!;
  await row.hover();
  await row.getByRole("button", { name: /^Rename/ }).click();
  await row.getByRole("textbox", { name: "New title" }).fill("Not this one");
  await page.keyboard.press("Enter");
  await expect(row).toContainText("the new title is applied once it ends");
  await page.keyboard.press("Escape"); // drops the rename; it does not stop the answer
  await expect(row).not.toContainText("still being written");
  await chat.waitForAnswerDone();
  await expect(row.locator(".thread-title")).toHaveText(title);
  await page.reload();
  await expect(chat.threadById(chat.threadIdFromUrl()!).locator(".thread-title")).toHaveText(title);
});

test("a new thread whose first answer is being written is still in the sidebar after a reload", async ({ page }) => {
  const { chat } = await askMidAnswer(page, 0);
  const threadId = chat.threadIdFromUrl()!;
  await page.reload();
  const answer = chat.lastAnswer();
  await expect(answer.root).toHaveAttribute("data-state", "streaming");
  await expect(chat.threadById(threadId)).toBeVisible();
  expect(await answer.root.getAttribute("data-state")).toBe("streaming"); // listed by the page load, not by the end
  await chat.waitForAnswerDone();
  await expect(chat.threadById(threadId)).toHaveCount(1);
});

test("a stopped answer, reloaded, keeps its text and offers Retry, which asks again in the same thread", async ({
  page,
}) => {
  const { chat, answer } = await askMidAnswer(page, 15);
  await chat.stopButton.click();
  await expect(answer.root).toHaveAttribute("data-state", "stopped");
  await expect(answer.retryButton).toBeVisible();
  const partial = await shownText(answer);
  const threadId = chat.threadIdFromUrl()!;

  await page.reload();
  const reloaded = chat.lastAnswer();
  await expect(reloaded.root).toHaveAttribute("data-state", "stopped");
  await expect(reloaded.stoppedNote).toContainText("Stopped");
  expect(await shownText(reloaded)).toBe(partial);
  await reloaded.retryButton.click();
  const retried = await chat.waitForAnswerDone();
  await expect(retried.text).toContainText("According to the documents");
  expect(chat.threadIdFromUrl()).toBe(threadId);
  await expect(chat.userMessages()).toHaveText([QUESTION, QUESTION]);
  await expect(chat.answers().first()).toHaveAttribute("data-state", "stopped");
  await expect(chat.answers().first().getByRole("button", { name: "Retry" })).toHaveCount(0); // asked again
  await page.reload();
  await expect(chat.answers().first()).toHaveAttribute("data-state", "stopped");
  await expect(chat.answers().first().getByRole("button", { name: "Retry" })).toHaveCount(0);
});

test("an answer stopped after the search says so, not 'No documents used', and the same after a reload", async ({
  page,
}) => {
  const { chat, answer } = await askMidAnswer(page, 15); // writing: the retriever has ended, no sources listed yet
  await chat.stopButton.click();
  await expect(answer.root).toHaveAttribute("data-state", "stopped");
  const said = /^▸\s*Stopped before sources were listed · \d+ passages? found/;
  await expect(answer.summaryText).toHaveText(new RegExp(`${said.source} · \\d+(\\.\\d)? s$`));
  await expect(answer.summaryText).not.toContainText("No documents used");
  const live = ((await answer.summaryText.textContent()) ?? "").replace(/ · [\d.]+ s$/, "");
  await answer.showSteps();
  await expect(answer.step("retriever")).toContainText(/\d+ passages?/);
  const liveNodes = await answer.steps.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-node") ?? ""));

  await page.reload();
  const reloaded = chat.lastAnswer();
  await expect(reloaded.root).toHaveAttribute("data-state", "stopped");
  await expect(reloaded.summaryText).toHaveText(new RegExp(`${said.source}$`));
  expect(await reloaded.summaryText.textContent()).toBe(live); // the same words, without the time it took
  await reloaded.showSteps();
  await expect(reloaded.step("retriever")).toContainText(/\d+ passages?/);
  expect(await reloaded.steps.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-node") ?? ""))).toEqual(
    liveNodes,
  );
});

test.describe("a run interrupted by a server restart", () => {
  test("shows its partial text marked interrupted, with Retry, which answers in the same thread", async ({ page }) => {
    const { chat, answer } = await askMidAnswer(page, 15);
    const threadId = chat.threadIdFromUrl()!;
    await backend.stop(); // the run dies with its server: the log still shows it running
    await backend.start(); // start-up marks it interrupted, with the text its logged tokens carried

    await page.goto(`${frontend.url}/?thread=${threadId}`);
    const interrupted = chat.lastAnswer();
    await expect(interrupted.root).toHaveAttribute("data-state", "stopped");
    await expect(interrupted.stoppedNote).toContainText("Interrupted");
    expect(await interrupted.textLength()).toBeGreaterThan(0);
    // The steps its logged status events showed are kept: the search had ended, no sources were listed.
    await expect(interrupted.summaryText).toHaveText(
      /^▸\s*Interrupted before sources were listed · \d+ passages? found$/,
    );
    await interrupted.retryButton.click();
    const retried = await chat.waitForAnswerDone();
    await expect(retried.text).toContainText("According to the documents");
    expect(chat.threadIdFromUrl()).toBe(threadId);
    await expect(chat.userMessages()).toHaveText([QUESTION, QUESTION]);
    await expect(chat.answers().first()).toHaveAttribute("data-state", "stopped");
    // A reload shows both: the interrupted answer and the retried one.
    await page.reload();
    await expect(chat.answers()).toHaveCount(2);
    await expect(chat.answers().first().locator(".turn-stopped")).toContainText("Interrupted");
  });

  for (const how of ["stop", "kill"] as const) {
    test(`a page streaming through a ${how === "kill" ? "kill -9" : "graceful stop"} and start reconnects on its own and ends the answer as interrupted, with Retry`, async ({
      page,
    }) => {
      test.setTimeout(120_000); // a backend start, and a retried answer of some 8 s
      const { chat, answer } = await askMidAnswer(page, 15);
      const threadId = chat.threadIdFromUrl()!;
      const reattaches: number[] = []; // what the UI's proxy answered each re-attach
      page.on("response", (res) => {
        if (/\/api\/runs\/[^/]+\/stream/.test(res.url())) reattaches.push(res.status());
      });
      await (how === "kill" ? backend.kill() : backend.stop());
      await expect(answer.reconnecting).toBeVisible();
      await expect(answer.root).toHaveAttribute("data-state", "streaming");
      expect(await answer.textLength()).toBeGreaterThan(15); // the partial text stays while it waits
      await backend.start();

      // No reload: the same answer ends as the server kept it, as a reload shows it.
      await expect(answer.root).toHaveAttribute("data-state", "stopped", { timeout: 30_000 });
      await expect(answer.stoppedNote).toContainText("Interrupted");
      await expect(answer.reconnecting).toHaveCount(0);
      await expect(chat.answers()).toHaveCount(1);
      await expect(answer.error).toHaveCount(0);
      expect(reattaches).toContain(502); // the proxy's answer while the backend is down
      expect(reattaches.at(-1)).toBe(200);
      const kept = await shownText(answer);
      expect(kept.length).toBeGreaterThan(0);

      await answer.retryButton.click();
      const retried = await chat.waitForAnswerDone();
      await expect(retried.text).toContainText("According to the documents");
      expect(chat.threadIdFromUrl()).toBe(threadId);
      await expect(chat.userMessages()).toHaveText([QUESTION, QUESTION]);
      await page.reload();
      const reloaded = chat.answers().first();
      await expect(reloaded).toHaveAttribute("data-state", "stopped");
      await expect(reloaded.locator(".turn-stopped")).toContainText("Interrupted");
      expect(await shownText(new AnswerView(reloaded))).toBe(kept); // the text shown live was the server's
    });
  }

  test("Esc while the page reconnects stops waiting: the answer ends as stopped at once, keeping its text", async ({
    page,
  }) => {
    test.setTimeout(120_000);
    const { chat, answer } = await askMidAnswer(page, 15);
    await backend.stop();
    await expect(answer.reconnecting).toBeVisible();
    const partial = await shownText(answer);
    await page.keyboard.press("Escape");
    await expect(answer.root).toHaveAttribute("data-state", "stopped");
    await expect(answer.stoppedNote).toContainText("Stopped");
    await expect(answer.error).toHaveCount(0);
    expect(await shownText(answer)).toBe(partial);
    await expect(chat.sendButton).toBeVisible();
    const reattaches = page.waitForRequest(/\/api\/runs\/[^/]+\/stream/, { timeout: 6_000 }).catch(() => null);
    expect(await reattaches).toBeNull(); // no more re-attaching: the longest wait is 5 s
    await backend.start();
  });
});
