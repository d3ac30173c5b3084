import { MID_STREAM, expect, test } from "./fixtures";

test("a question shows one live status line, then streamed text, then a summary that expands to its steps", async ({
  chat,
  page,
}) => {
  await chat.goto();
  // Every text the live line shows, recorded in the page: a label seen for 50 ms is not missed on a loaded machine.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { liveLabels: string[] }).liveLabels = seen;
    new MutationObserver(() => {
      const label = document.querySelector(".message-assistant:last-child .status[data-running] .status-current");
      const text = label?.textContent ?? "";
      if (text && seen.at(-1) !== text) seen.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await chat.ask("What does servicing a second Zephyr-9 unit in the same visit cost?");
  const answer = chat.lastAnswer();

  // One line says what is happening now, with the elapsed time; no list of steps while it runs.
  await expect(answer.liveLine).toBeVisible();
  await expect(answer.statusLine).toHaveCount(1);
  await expect(answer.statusLine).toContainText(/\d+\.\d s/);
  await expect(answer.steps).toHaveCount(0);

  // Text arrives and grows while the answer streams; the line then says so.
  await expect.poll(() => answer.textLength(), MID_STREAM).toBeGreaterThan(0);
  expect(await answer.root.getAttribute("data-state")).toBe("streaming");
  const early = await answer.textLength();
  await expect.poll(() => answer.textLength(), MID_STREAM).toBeGreaterThan(early + 10);
  await expect(chat.stopButton).toBeVisible();
  await expect(answer.steps).toHaveCount(0);
  await chat.screenshot("chat-streaming");

  await chat.waitForAnswerDone();
  await expect(answer.text).toContainText("According to the documents");
  // The line said what was happening: "Writing…" while the text came in, after what came before it. Which step
  // labels show before it varies: a browser that gets several status events in one chunk renders only the last
  // (lib/turn-summary's unit tests check the labels themselves).
  const labels = await page.evaluate(() => (window as unknown as { liveLabels: string[] }).liveLabels);
  expect(labels.indexOf("Writing…"), labels.join(" | ")).toBeGreaterThan(0);
  // After the answer: one summary line, collapsed; the keyboard opens the full timeline.
  await expect(answer.liveLine).toHaveCount(0);
  await expect(answer.summary).toHaveText(/^▸\s*\d+ passages? from \d+ documents? · \d+(\.\d)? s$/);
  await expect(answer.summary).toHaveAttribute("aria-expanded", "false");
  await answer.summary.focus();
  await page.keyboard.press("Enter");
  await expect(answer.summary).toHaveAttribute("aria-expanded", "true");
  await expect(answer.step("router")).toContainText("Understanding question");
  await expect(answer.step("retriever")).toContainText("Searching");
  await expect(answer.step("retriever")).toHaveClass(/step-ok/);
  await expect(answer.step("generator")).toHaveClass(/step-ok/);
  await page.keyboard.press("Enter");
  await expect(answer.steps).toHaveCount(0);
  await expect(answer.badges.filter({ hasText: "searched the documents" })).toBeVisible();
  await expect(chat.sendButton).toBeVisible();

  // Citations are clickable: the sources panel opens on the cited card...
  await expect(answer.citations.first()).toBeVisible();
  await expect(answer.sourcesButton).toHaveText(/Sources \(\d+\)/);
  await answer.citation("S1").click();
  await expect(answer.sourcesPanel).toBeVisible();
  const card = answer.sourceCard("S1");
  await expect(card).toHaveAttribute("data-highlighted", "true");
  await expect(card.locator(".source-doc")).toHaveText(/zephyr-9/);
  await expect(card).toContainText(/relevance \d\.\d\d/);
  await expect(card.locator(".source-snippet")).not.toBeEmpty();
  // ...and the document opens at the passage (tests/e2e/evidence.spec.ts); Escape closes it.
  await expect(chat.viewer).toContainText(/zephyr-9/);
  await chat.page.keyboard.press("Escape");
  await expect(chat.viewer).toBeHidden();

  // Hovering a marker previews its snippet.
  await answer.citation("S1").hover();
  const preview = answer.root.locator(".cite-preview").first();
  await expect(preview).toBeVisible();
  await expect(preview).toContainText(/zephyr-9/);
  await chat.screenshot("sources-open");
});

test("keyboard: Shift+Enter adds a line, Enter sends, the copy button copies", async ({ chat, page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await chat.goto();
  await chat.composer.focus();
  await page.keyboard.type("hello there");
  await page.keyboard.press("Shift+Enter");
  await page.keyboard.type("second line");
  await expect(chat.composer).toHaveValue("hello there\nsecond line");
  await page.keyboard.press("Enter");
  await expect(chat.composer).toHaveValue("");
  await expect(chat.userMessages().last()).toHaveText("hello there\nsecond line");
  const answer = await chat.waitForAnswerDone();
  await expect(answer.badges.filter({ hasText: "chat" })).toBeVisible();
  await answer.copyButton.click();
  await expect(answer.copyButton).toHaveText("Copied");
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toBe(await answer.text.innerText());
});

test("mode switch sends the chosen mode", async ({ chat, page }) => {
  await chat.goto();
  await chat.setMode("Chat");
  const request = page.waitForRequest("**/api/chat/stream");
  await chat.ask("What does servicing a second Zephyr-9 unit in the same visit cost?");
  expect((await request).postDataJSON()).toMatchObject({ mode: "chat" });
  const answer = await chat.waitForAnswerDone();
  await answer.showSteps();
  await expect(answer.step("router")).toBeVisible();
  await expect(answer.step("retriever")).toHaveCount(0);
  await expect(answer.badges.filter({ hasText: "chat" })).toBeVisible();
  await chat.page.reload();
  await expect(page.getByRole("radio", { name: "Chat" })).toHaveAttribute("aria-checked", "true");
  await chat.setMode("Auto");
});

test("a message over the server's limit is refused in the box, before it is sent", async ({ chat, page }) => {
  await chat.goto();
  await chat.composer.fill("x ".repeat(8000) + "xy"); // 16,002 characters; the limit is 16,000
  await expect(chat.composerWarning).toContainText("16,002 characters; the limit is 16,000");
  await expect(chat.sendButton).toBeDisabled();
  await chat.composer.press("Enter");
  await expect(chat.answers()).toHaveCount(0);
  await chat.composer.fill("x ".repeat(7999) + "xy"); // 16,000: accepted
  await expect(chat.composerWarning).toHaveCount(0);
  await expect(chat.sendButton).toBeEnabled();
  expect(page.url()).not.toContain("thread=");
});

test("an answer from the FAQ says so, names the FAQ entry's documents and opens its passage, at once and after a reload", async ({
  chat,
  page,
}) => {
  await chat.goto();
  await chat.ask("What is the notice period?"); // data/faq.yaml: notice-period, sources [employee-handbook.md]
  const answer = await chat.waitForAnswerDone();
  await expect(answer.text).toContainText("2 months");
  await expect(answer.summaryText).toHaveText(/^▸\s*Answered from the FAQ · employee-handbook\.md · \d+(\.\d)? s$/);
  await expect(answer.summaryText).not.toContainText("No documents used");
  // its citation opens the handbook at the passage that states it (tester: an FAQ answer had nothing to open)
  await answer.citation("S1").click();
  await expect(chat.viewer).toContainText("employee-handbook.md");
  await expect(chat.viewerSupport.first()).toContainText("2 weeks");
  await chat.screenshot("faq-citation-opens-passage");

  await page.reload();
  const reloaded = chat.lastAnswer();
  await expect(reloaded.root).toHaveAttribute("data-state", "history");
  // with the time it took, as it showed live
  await expect(reloaded.summaryText).toHaveText(/^▸\s*Answered from the FAQ · employee-handbook\.md · \d+(\.\d)? s$/);
});

test("the message box has the focus on opening the app, a conversation, and a new chat", async ({ chat, page }) => {
  await page.goto("/");
  await expect(chat.composer).toBeFocused();
  await page.keyboard.type("hello"); // typing at once goes into the box
  await expect(chat.composer).toHaveValue("hello");
  await page.keyboard.press("Enter");
  await chat.waitForAnswerDone();
  const threadId = chat.threadIdFromUrl()!;

  await page.goto(`/?thread=${threadId}`);
  await expect(chat.lastAnswer().root).toHaveAttribute("data-state", "history");
  await expect(chat.composer).toBeFocused();
  await page.getByRole("button", { name: "+ New chat" }).click();
  await expect(chat.composer).toBeFocused();
  await chat.threadById(threadId).locator(".thread-link").click();
  await expect(chat.userMessages()).toHaveText(["hello"]);
  await expect(chat.composer).toBeFocused();
});
