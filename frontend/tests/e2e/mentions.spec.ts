import { backendUrl, expect, test } from "./fixtures";

test("@ opens a keyboard-navigable document list; the pick becomes a chip and targets the search", async ({
  chat,
  page,
}) => {
  await chat.goto();
  await chat.type("@");
  await expect(chat.mentionPopup).toBeVisible();
  // Every ingested sample document is offered (the corpus may grow: check the ones we know).
  for (const name of ["employee-handbook.md", "it-security-policy.md", "zephyr-9-service-manual.md"]) {
    await expect(chat.mentionOptions.filter({ hasText: name })).toHaveCount(1);
  }
  const count = await chat.mentionOptions.count();
  await expect(chat.mentionOptions.nth(0)).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("ArrowDown");
  await expect(chat.mentionOptions.nth(1)).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("ArrowUp");
  await expect(chat.mentionOptions.nth(count - 1)).toHaveAttribute("aria-selected", "true");

  await page.keyboard.type("emp");
  await expect(chat.mentionOptions).toHaveCount(1);
  await chat.screenshot("mention-popup");
  await page.keyboard.press("Enter");
  await expect(chat.mentionPopup).toBeHidden();
  await expect(chat.composer).toHaveValue("@employee-handbook ");
  await expect(chat.chips).toHaveText([/@employee-handbook\.md/]);

  await page.keyboard.type("what is the notice period?");
  await page.keyboard.press("Enter");
  const answer = await chat.waitForAnswerDone();
  await answer.showSteps();
  await expect(answer.step("retriever")).toContainText("Searching employee-handbook");
  await expect(answer.text).toContainText("notice period");
  await answer.sourcesButton.click();
  const docs = await answer.sourceCards.locator(".source-doc").allTextContents();
  expect(docs.length).toBeGreaterThan(0);
  expect(new Set(docs)).toEqual(new Set(["employee-handbook.md"]));
});

test("Esc closes the list; an unknown mention is flagged before sending", async ({ chat, page }) => {
  await chat.goto();
  await chat.type("@employee-hand");
  await expect(chat.mentionPopup).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(chat.mentionPopup).toBeHidden();
  await expect(chat.composer).toHaveValue("@employee-hand");
  await expect(chat.chips).toHaveText([/@employee-handbook\.md/]);

  await chat.composer.fill("@nosuchdoc what is the notice period?");
  await expect(chat.unknownChips).toHaveText([/@nosuchdoc/]);
  await expect(chat.composerWarning).toContainText("@nosuchdoc matches no document");
  await chat.unknownChips.getByRole("button").click();
  await expect(chat.composer).toHaveValue("what is the notice period?");

  // Sending anyway: the backend says so in the status timeline.
  await chat.ask("@nosuchdoc what is the notice period?");
  const answer = await chat.waitForAnswerDone();
  await answer.showSteps();
  await expect(answer.steps.filter({ hasText: /no document/i })).toBeVisible();
});

test("sent anyway, an ambiguous mention's badge says ambiguous and an unknown one's unknown", async ({
  chat,
  page,
}) => {
  // Tester: "@expense-rules" (two documents of that name) said so in its reply, but its badge said "unknown document".
  await chat.goto();
  await chat.ask("@zephyr-9 how often is it serviced?"); // zephyr-9-quick-start.pdf and zephyr-9-service-manual.md
  let answer = await chat.waitForAnswerDone();
  await expect(answer.text).toContainText("matches several documents");
  await expect(answer.badges).toHaveText(["ambiguous document"]);
  await page.reload();
  await expect(chat.lastAnswer().badges).toHaveText(["ambiguous document"]); // the stored turn says the same

  await chat.ask("@nosuchdoc how often is it serviced?");
  answer = await chat.waitForAnswerDone();
  await expect(answer.badges).toHaveText(["unknown document"]);
});

test("with more documents than the @ list shows, it says how many more and the count stays in view", async ({
  chat,
  page,
}) => {
  const added: string[] = [];
  for (const name of ["extra-a.md", "extra-b.md", "extra-c.md"]) {
    const res = await page.request.post(`${backendUrl()}/api/documents`, {
      multipart: { files: { name, mimeType: "text/markdown", buffer: Buffer.from(`# ${name}\n\nA note.`) } },
    });
    expect(res.status()).toBe(202);
    added.push((await res.json()).documents[0].id);
  }
  try {
    await expect
      .poll(async () => {
        const docs = await (await page.request.get(`${backendUrl()}/api/documents`)).json();
        return docs.filter((d: { status: string }) => d.status === "ready").length;
      })
      .toBeGreaterThan(8);
    await chat.goto();
    await chat.type("@");
    await expect(chat.mentionOptions).toHaveCount(8);
    const more = chat.mentionPopup.locator(".mention-more");
    await expect(more).toHaveText(/^\d+ more documents?: type more of the name to find (it|them)$/);
    await expect(more).toBeInViewport({ ratio: 1 });
    await expect(chat.composer).toHaveAttribute("aria-describedby", (await more.getAttribute("id"))!);
    await page.keyboard.type("extra-c");
    await expect(chat.mentionOptions).toHaveCount(1);
    await expect(more).toHaveCount(0);
  } finally {
    for (const id of added) await page.request.delete(`${backendUrl()}/api/documents/${id}`);
  }
});

test("the @-scope a follow-up keeps is shown above the box, on each answer, after a reload, and can be left", async ({
  chat,
  page,
}) => {
  await chat.goto();
  await expect(chat.scopeNote).toBeHidden();
  await chat.ask("@employee-handbook what is the notice period?");
  const first = await chat.waitForAnswerDone();
  await expect(first.badges.filter({ hasText: "searched only employee-handbook.md" })).toBeVisible();
  await expect(chat.scopeNote).toContainText("Follow-up questions search only employee-handbook.md");
  // a new @-mention being typed replaces the note: that question searches what it names
  await chat.composer.fill("@it-security-policy passwords?");
  await expect(chat.scopeNote).toBeHidden();
  await chat.composer.fill("");

  await chat.ask("and during probation?");
  const carried = await chat.waitForAnswerDone();
  await expect(carried.badges.filter({ hasText: "searched only employee-handbook.md (follow-up)" })).toBeVisible();
  await page.reload();
  await expect(chat.answers()).toHaveCount(2);
  await expect(chat.lastAnswer().badges.filter({ hasText: "employee-handbook.md (follow-up)" })).toBeVisible();
  await expect(chat.scopeNote).toContainText("employee-handbook.md");
  await chat.screenshot("scope-note");

  await chat.scopeNote.getByRole("button", { name: "Search all documents" }).click();
  await expect(chat.scopeNote).toBeHidden();
  await chat.ask("and during probation?");
  const all = await chat.waitForAnswerDone();
  await all.showSteps();
  await expect(all.step("retriever")).not.toContainText("employee-handbook");
  await expect(all.badges.filter({ hasText: /^searched the documents$/ })).toBeVisible();
  await page.reload();
  await expect(chat.answers()).toHaveCount(3);
  await expect(chat.scopeNote).toBeHidden(); // the server ended the scope too
});
