import { expect, test } from "./fixtures";

const QUOKKA = `# Quokka-7 field guide

The Quokka-7 rover is serviced at the Harbour workshop.
The Quokka-7 emergency beacon code is BLUE-HARBOR-42.
Its battery lasts eleven hours in cold weather.
`;

test("upload a document, watch it become ready, ask about it, delete it", async ({ documents, chat, page }) => {
  await documents.goto();
  await expect(documents.status("employee-handbook.md")).toHaveText(/ready/);
  const before = await documents.rows.count();

  await documents.upload([{ name: "quokka-field-guide.md", mimeType: "text/markdown", buffer: Buffer.from(QUOKKA) }]);
  const upload = documents.uploads.first();
  await expect(upload).toHaveAttribute("data-state", "accepted");
  await expect(upload.locator("progress")).toHaveAttribute("value", "1");
  await expect(documents.row("quokka-field-guide.md")).toBeVisible();
  await expect(documents.status("quokka-field-guide.md")).toHaveText(/ready/, { timeout: 30_000 });
  await expect(documents.row("quokka-field-guide.md")).toContainText("md");
  await documents.screenshot("documents-page");

  // The new document is offered by @ and answers questions.
  await page.getByRole("link", { name: "← Chat" }).click();
  await chat.type("@quok");
  await expect(chat.mentionOptions).toHaveText([/quokka-field-guide\.md/]);
  await page.keyboard.press("Tab");
  await page.keyboard.type("what is the emergency beacon code?");
  await page.keyboard.press("Enter");
  const answer = await chat.waitForAnswerDone();
  await expect(answer.text).toContainText("BLUE-HARBOR-42");
  await answer.citations.first().click();
  await expect(answer.sourceCards.first()).toContainText("quokka-field-guide.md");

  await documents.goto();
  await documents.delete("quokka-field-guide.md");
  await expect(documents.row("quokka-field-guide.md")).toHaveCount(0);
  await page.reload();
  await expect(documents.status("employee-handbook.md")).toHaveText(/ready/);
  await expect(documents.rows).toHaveCount(before);
});

test("a file the backend refuses shows its reason", async ({ documents }) => {
  await documents.goto();
  await expect(documents.status("employee-handbook.md")).toHaveText(/ready/);
  const before = await documents.rows.count();
  await documents.upload([
    { name: "tool.exe", mimeType: "application/octet-stream", buffer: Buffer.from([0x4d, 0x5a, 0, 1, 2, 3]) },
  ]);
  const upload = documents.uploads.first();
  await expect(upload).toHaveAttribute("data-state", "failed");
  await expect(upload.getByRole("alert")).toContainText("not supported");
  await expect(documents.rows).toHaveCount(before);
});

const EXE = { name: "tool.exe", mimeType: "application/octet-stream", buffer: Buffer.from([0x4d, 0x5a, 0, 1, 2, 3]) };
const EMPTY = { name: "empty-notes.md", mimeType: "text/markdown", buffer: Buffer.from("   \n") };

test("a batch says file by file what was accepted and why the others were refused", async ({ documents }) => {
  // Tester: every refusal in one red paragraph joined by ".;", and the batch red although one file was accepted.
  await documents.goto();
  await expect(documents.status("employee-handbook.md")).toHaveText(/ready/);
  await documents.upload([
    { name: "walrus-notes.md", mimeType: "text/markdown", buffer: Buffer.from("# Walrus\n\nWalruses rest on ice.\n") },
    EMPTY,
    EXE,
  ]);
  const upload = documents.uploads.first();
  await expect(upload).toHaveAttribute("data-state", "partial");
  await expect(documents.uploadFiles(upload)).toHaveText([
    /^walrus-notes\.md\b.*accepted/,
    /^empty-notes\.md\b.*no text/,
    /^tool\.exe\b.*not supported/,
  ]);
  await expect(documents.refusedFiles(upload)).toHaveCount(2);
  await expect(upload).not.toContainText(".;");
  // the summary is not an error: something was accepted
  const summary = upload.locator(".upload-message");
  await expect(summary).toHaveText(/1 accepted, 2 refused/);
  await expect(summary).not.toHaveAttribute("role", "alert");
  const colour = (el: Element) => getComputedStyle(el).color;
  const refusedColour = await documents.refusedFiles(upload).first().evaluate(colour);
  expect(await summary.evaluate(colour)).not.toBe(refusedColour);
  expect(await documents.uploadFiles(upload).first().evaluate(colour)).not.toBe(refusedColour);
  await documents.screenshot("upload-partly-refused");

  await expect(documents.status("walrus-notes.md")).toHaveText(/ready/, { timeout: 30_000 });
  await documents.delete("walrus-notes.md");
  await expect(documents.row("walrus-notes.md")).toHaveCount(0);
});

test("a batch refused whole lists each file's reason on its own line", async ({ documents }) => {
  await documents.goto();
  await documents.upload([EMPTY, EXE]);
  const upload = documents.uploads.first();
  await expect(upload).toHaveAttribute("data-state", "failed");
  await expect(upload.getByRole("alert")).toContainText("2 refused");
  await expect(documents.refusedFiles(upload)).toHaveText([
    /^empty-notes\.md\b.*no text/,
    /^tool\.exe\b.*not supported/,
  ]);
});

test("the row dividers run straight through the actions column", async ({ documents }) => {
  // Tester: the line under the Delete buttons sat about a pixel off the rest of the row's.
  await documents.goto();
  await expect(documents.status("employee-handbook.md")).toHaveText(/ready/);
  // The actions cell was laid out as a flex box, not a table cell: its box sat half a pixel inside the row's and its
  // own border did not merge with the row's collapsed ones, so the line was drawn a pixel higher.
  for (const row of (await documents.rows.all()).slice(0, 3)) {
    const edges = await row
      .locator("td")
      .evaluateAll((cells) => cells.map((c) => [c.getBoundingClientRect().top, c.getBoundingClientRect().bottom]));
    for (const side of [0, 1]) {
      const at = edges.map((e) => e[side]);
      expect(Math.max(...at) - Math.min(...at)).toBeLessThan(0.25);
    }
  }
});
