import { expect, test } from "./fixtures";

// The fake model adds "The unit also holds 42 litres of R-410A refrigerant [S1]." when asked to (backend/llm/fake.py):
// no passage says so, so the source check removes the marker and lists the sentence as unsupported.
const INVENT = "(fake: invent a fact)";

test("an unsupported claim is underlined with a badge, live and after a reload", async ({ chat, page }) => {
  await chat.goto();
  await chat.ask(`How often must the Zephyr-9 be serviced? ${INVENT}`);
  const live = await chat.waitForAnswerDone();
  await expect(live.unsupported).toHaveCount(1);
  await expect(live.unsupported).toContainText("42 litres of R-410A refrigerant");
  await expect(live.unsupported).toHaveAttribute("title", "Not found in the sources");
  await expect(live.badges.filter({ hasText: "1 claim not in the sources" })).toBeVisible();
  // The supported quote before it is not underlined.
  await expect(live.text).toContainText("According to the documents");
  const liveMarked = await live.unsupported.textContent();
  await chat.screenshot("unsupported-claim");

  await page.reload();
  const reloaded = chat.lastAnswer();
  await expect(reloaded.root).toHaveAttribute("data-state", "history");
  await expect(reloaded.unsupported).toHaveCount(1);
  await expect(reloaded.unsupported).toHaveText(liveMarked!);
  await expect(reloaded.badges.filter({ hasText: "1 claim not in the sources" })).toBeVisible();
});

test("a citation opens its Markdown document at the passage, supporting sentence highlighted", async ({ chat }) => {
  await chat.goto();
  await chat.ask("@zephyr-9-service-manual.md How often must the Zephyr-9 be serviced?");
  const answer = await chat.waitForAnswerDone();
  const cited = answer.citation("S1");
  // From the keyboard first: the viewer takes the focus, not the source card the panel opens on behind it.
  await cited.focus();
  await chat.page.keyboard.press("Enter");
  await expect(chat.viewer.getByRole("button", { name: "Close document" })).toBeFocused();
  await chat.page.keyboard.press("Escape");
  await expect(chat.viewer).toBeHidden();
  await cited.click();
  await expect(chat.viewer).toBeVisible();
  await expect(chat.viewer).toContainText("zephyr-9-service-manual.md");
  await expect(chat.viewerSupport).toBeVisible();
  await expect(chat.viewerSupport).toBeInViewport();
  // The highlighted sentence is the one the answer quotes, inside the highlighted passage.
  const support = (await chat.viewerSupport.textContent())!.trim();
  expect(support.length).toBeGreaterThan(10);
  await expect(answer.text).toContainText(support.replace(/\.$/, ""));
  await expect(chat.viewerPassage).toContainText(support);
  // The rest of the document is there around it.
  expect(((await chat.viewer.locator(".doc-text").textContent()) ?? "").length).toBeGreaterThan(support.length * 3);
  await chat.screenshot("show-me-where-markdown");
  await chat.page.keyboard.press("Escape");
  await expect(chat.viewer).toBeHidden();
});

test("each marker of a source cited twice opens the sentence that marker ends", async ({ chat }) => {
  // Tester: every marker of one source showed the first sentence citing it ("Answer: The four spaces …").
  await chat.goto();
  // unscoped: an @mention puts the document's opening passage first, which the fake would quote
  await chat.ask("How often must the Zephyr-9 be serviced? (fake: quote two sentences)");
  const answer = await chat.waitForAnswerDone();
  const markers = answer.citations.and(answer.root.locator('[data-cite="S1"]'));
  await expect(markers).toHaveCount(2);
  const claim = chat.viewer.locator(".doc-viewer-claim");
  const shown: string[] = [];
  for (const n of [0, 1]) {
    await markers.nth(n).click();
    await expect(claim).toBeVisible();
    shown.push(((await claim.textContent()) ?? "").replace(/^Answer:\s*/, "").trim());
    await chat.page.keyboard.press("Escape");
    await expect(chat.viewer).toBeHidden();
  }
  expect(shown[0]).not.toEqual(shown[1]);
  const text = (await answer.text.textContent()) ?? "";
  for (const sentence of shown) expect(text).toContain(sentence.replace(/\.$/, ""));
  expect(text.indexOf(shown[0].replace(/\.$/, ""))).toBeLessThan(text.indexOf(shown[1].replace(/\.$/, "")));
});

test("a PDF citation opens the page itself, rendered by pdf.js with the sentence boxed, and links to the PDF", async ({
  chat,
}) => {
  await chat.goto();
  await chat.ask("@travel-policy.pdf What is the hotel limit per night?");
  const answer = await chat.waitForAnswerDone();
  await answer.citation("S1").click();
  await expect(chat.viewer).toBeVisible();
  await expect(chat.viewer).toContainText("travel-policy.pdf");
  await expect(chat.viewer.locator(".source-meta", { hasText: /^page \d+$/ })).toBeVisible();
  // The page itself, rendered by pdf.js, with the supporting sentence boxed over it (in view).
  const page = chat.viewer.locator(".pdf-page");
  await expect(page).toHaveAttribute("data-status", "ready");
  const canvas = page.locator("canvas.pdf-canvas");
  expect((await canvas.boundingBox())!.height).toBeGreaterThan(300);
  const painted = await canvas.evaluate((c: HTMLCanvasElement) => {
    const data = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
    let dark = 0;
    for (let i = 0; i < data.length; i += 4) dark += data[i] < 128 ? 1 : 0;
    return dark;
  });
  expect(painted).toBeGreaterThan(1000); // text was drawn, not a blank page
  await expect(page.locator(".pdf-support").first()).toBeInViewport();
  await chat.screenshot("show-me-where-pdf");
  expect(await page.locator(".pdf-box").count()).toBeGreaterThan(await page.locator(".pdf-support").count());
  // The extracted text is there too, folded, with the same sentence marked.
  await chat.viewer.getByText(/Extracted text of page \d+/).click();
  await expect(chat.viewerSupport).toBeVisible();
  const link = chat.viewer.getByRole("link", { name: /Open the PDF at page \d+/ });
  await expect(link).toHaveAttribute("href", /\/api\/documents\/[^/]+\/file#page=\d+$/);
  // The link serves the PDF itself.
  const href = (await link.getAttribute("href"))!.split("#")[0];
  const res = await chat.page.request.get(href);
  expect(res.status()).toBe(200);
  expect(res.headers()["content-type"]).toContain("application/pdf");
});

test("a citation written after the full stop opens the PDF at the page of the sentence it cites", async ({ chat }) => {
  await chat.goto();
  // The fake model then writes "… within these limits. [S1]", as small models often do (backend/llm/fake.py).
  await chat.ask("@travel-policy.pdf What is the hotel limit per night? (fake: cite after the full stop)");
  const answer = await chat.waitForAnswerDone();
  await expect(answer.text).toContainText(/within these limits\.\s*S1/);
  await answer.citation("S1").click();
  await expect(chat.viewer.locator(".source-meta", { hasText: /^page \d+$/ })).toHaveText("page 2");
  await expect(chat.viewer.locator(".pdf-page")).toHaveAttribute("data-status", "ready");
  await expect(chat.viewer.locator(".pdf-support").first()).toBeInViewport();
  await chat.viewer.getByText("Extracted text of page 2").click();
  await expect(chat.viewerSupport).toContainText("The travel portal only shows hotels within these limits.");
  await expect(chat.viewerSupport).not.toContainText("Travel Policy"); // the sentence, not the whole passage
});

// The fake judge answers "no" to the answerable check when the question holds this sentence (backend/llm/fake.py).
const JUDGE_NO = "The fake judge says no.";

test("an answer the checks replace says 'not in the documents' and why, live and after a reload", async ({
  chat,
  page,
}) => {
  await chat.goto();
  await chat.ask(`@it-security-policy.md How often must passwords be changed? ${JUDGE_NO}`);
  const live = await chat.waitForAnswerDone();
  await expect(live.text).toContainText("I could not find this in the documents.");
  const badge = live.badges.filter({ hasText: "not in the documents" });
  await expect(badge).toBeVisible();
  await expect(badge).toHaveAttribute("title", /passages do not state the answer/);
  await expect(live.badges.filter({ hasText: "grounded" })).toHaveCount(0);

  await page.reload();
  const reloaded = chat.lastAnswer();
  await expect(reloaded.root).toHaveAttribute("data-state", "history");
  await expect(reloaded.badges.filter({ hasText: "not in the documents" })).toHaveAttribute(
    "title",
    /passages do not state the answer/,
  );
});

test("a citation of a document deleted since shows the passage the answer was given, not an API message", async ({
  chat,
  page,
}) => {
  await chat.goto();
  await chat.ask("@zephyr-9-service-manual.md How often must the Zephyr-9 be serviced?");
  const answer = await chat.waitForAnswerDone();
  // What the API answers for a deleted document (tester: the viewer showed "document '8ccb…' does not exist; GET
  // /api/documents lists the documents").
  const detail = "document 'gone' does not exist; GET /api/documents lists the documents";
  await page.route("**/api/documents/*/text", (route) =>
    route.fulfill({ status: 404, contentType: "application/json", body: JSON.stringify({ detail }) }),
  );
  await answer.citation("S1").click();
  await expect(chat.viewer).toContainText("is no longer in the knowledge base");
  await expect(chat.viewer.locator("blockquote")).toContainText("Zephyr-9");
  await expect(chat.viewer).not.toContainText("GET /api/documents");
});

test("a citation of a document deleted and then uploaded again opens the copy at the passage", async ({
  chat,
  documents,
  page,
}) => {
  const guide = "# Kestrel-4 guide\n\nThe Kestrel-4 pump is serviced every 9 months by the harbour crew.\n";
  const file = { name: "kestrel-guide.md", mimeType: "text/markdown", buffer: Buffer.from(guide) };
  await documents.goto();
  await documents.upload([file]);
  await expect(documents.status("kestrel-guide.md")).toHaveText(/ready/, { timeout: 30_000 });
  await chat.goto();
  await chat.ask("@kestrel-guide.md How often is the Kestrel-4 pump serviced?");
  await chat.waitForAnswerDone();
  await expect(page).toHaveURL(/thread=/); // the thread's id reaches the URL with its first events
  const threadUrl = page.url();

  await documents.goto();
  await documents.delete("kestrel-guide.md");
  await expect(documents.row("kestrel-guide.md")).toHaveCount(0);
  await documents.upload([file]); // the same file: a new document id (tester: still "no longer in the knowledge base")
  await expect(documents.status("kestrel-guide.md")).toHaveText(/ready/, { timeout: 30_000 });

  await page.goto(threadUrl);
  const answer = chat.lastAnswer();
  await answer.citations.first().click();
  await expect(chat.viewer).toContainText("this is the one uploaded again");
  await expect(chat.viewer.locator("mark").first()).toContainText("serviced every 9 months");
  await expect(chat.viewer).not.toContainText("no longer in the knowledge base");
  await documents.goto();
  await documents.delete("kestrel-guide.md");
});
