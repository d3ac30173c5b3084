import { backendUrl, expect, test } from "./fixtures";

test.describe("phone width", () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, reducedMotion: "reduce" });

  test("the sidebar becomes a drawer and the chat still works", async ({ chat, page }) => {
    await chat.goto();
    await expect(chat.sidebar).not.toBeInViewport();
    await chat.ask("@employee-handbook what is the notice period?");
    const answer = await chat.waitForAnswerDone();
    await answer.sourcesButton.click();
    await expect(answer.sourcesPanel).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await chat.screenshot("phone");
    const heading = await chat.heading.boundingBox();
    expect(heading!.width).toBeGreaterThan(250); // the title has its own row, not "How …" beside the mode switch

    await chat.menuButton.click();
    await expect(chat.sidebar).toBeInViewport();
    await chat.screenshot("phone-sidebar");
    await page.mouse.click(370, 400); // the scrim closes it
    await expect(chat.sidebar).not.toBeInViewport();
  });

  test("keyboard: the drawer takes the focus when it opens, and Escape closes it and gives the focus back", async ({
    chat,
    page,
  }) => {
    await chat.goto();
    await chat.menuButton.focus();
    await page.keyboard.press("Enter");
    await expect(chat.sidebar).toBeInViewport();
    // the focus stayed on the menu button behind the scrim, the drawer's links a Shift+Tab walk back, no Escape (tester)
    await expect(chat.newChatButton).toBeFocused();
    await page.keyboard.press("Escape");
    await expect(chat.sidebar).not.toBeInViewport();
    await expect(chat.menuButton).toBeFocused();
    await expect(chat.menuButton).toHaveAttribute("aria-expanded", "false");
  });

  test("a PDF citation opens with the document's name on one line, its buttons below it", async ({ chat }) => {
    await chat.goto();
    await chat.ask("@travel-policy.pdf What is the hotel limit per night?");
    const answer = await chat.waitForAnswerDone();
    await answer.citation("S1").tap();
    const name = chat.viewer.locator(".doc-viewer-name");
    await expect(name).toHaveText("travel-policy.pdf");
    // tester: "tra / vel / - / pol / icy / .p / df", one syllable a line beside the page and the two buttons
    const box = (await name.boundingBox())!;
    const line = await name.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight) || 24);
    expect(box.height).toBeLessThan(1.5 * line);
    await expect(chat.viewer.getByRole("link", { name: /Open the PDF at page \d+/ })).toBeInViewport();
    // tester: the page drawn 360 px wide is a few pixels a line; the page's text opens, at the sentence
    const text = chat.viewer.locator("details.doc-text-details");
    await expect(text).toHaveAttribute("open", "");
    await expect(text.locator("mark.support")).toBeInViewport();
    await chat.screenshot("phone-pdf-citation");
  });

  test("the message box does not take the focus on its own: the keyboard would cover the conversation", async ({
    chat,
    page,
    request,
  }) => {
    const asked = await request.post(`${backendUrl()}/api/chat`, { data: { message: "hello", mode: "chat" } });
    const { thread_id: threadId } = await asked.json();
    await chat.goto(threadId);
    await expect(chat.userMessages()).toHaveText(["hello"]); // the conversation has opened
    await expect(chat.composer).not.toBeFocused();
    await chat.composer.tap();
    await expect(chat.composer).toBeFocused(); // a tap does it
  });
});

test.describe("a narrow desktop window", () => {
  // not isMobile: a mobile viewport widens itself to the content, which would hide a page that scrolls sideways
  test.use({ viewport: { width: 375, height: 812 } });

  test("the documents page does not scroll sideways", async ({ page }) => {
    await page.goto("/documents");
    await expect(page.getByRole("table").first().getByText("employee-handbook.md")).toBeVisible();
    const row = page.getByRole("row").filter({ hasText: "employee-handbook.md" });
    await expect(row.getByRole("cell").filter({ hasText: /ready/i })).toBeInViewport({ ratio: 1 });
    await expect(row.getByRole("button").last()).toBeInViewport({ ratio: 1 }); // the row's actions, not cut off
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  });
});

test.describe("dark theme", () => {
  test.use({ colorScheme: "dark" });

  test("follows the system and can be switched", async ({ chat, page }) => {
    await chat.goto();
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(await bg()).toBe("rgb(20, 22, 26)");
    await chat.ask("What does servicing a second Zephyr-9 unit in the same visit cost?");
    const answer = await chat.waitForAnswerDone();
    await answer.sourcesButton.click();
    await chat.screenshot("dark-theme");

    const toggle = page.locator(".theme-toggle");
    await toggle.click(); // system -> dark
    await toggle.click(); // dark -> light
    await expect(toggle).toHaveText("Theme: light");
    expect(await bg()).toBe("rgb(255, 255, 255)");
    await page.reload();
    expect(await bg()).toBe("rgb(255, 255, 255)");
    await toggle.click(); // back to system
  });
});

test.describe("a wide desktop window", () => {
  test.use({ viewport: { width: 1400, height: 900 } });

  test("the open document sits beside the answer, whose markers stay within reach", async ({ chat }) => {
    // Tester: at 1400 px the viewer covered the answer column; no other marker could be clicked until Close.
    await chat.goto();
    await chat.ask("How often must the Zephyr-9 be serviced? (fake: quote two sentences)");
    const answer = await chat.waitForAnswerDone();
    const markers = answer.citations;
    await markers.first().click();
    await expect(chat.viewer).toBeVisible();
    const viewer = (await chat.viewer.boundingBox())!;
    const text = (await answer.text.boundingBox())!;
    expect(text.x + text.width).toBeLessThanOrEqual(viewer.x);
    await markers.last().click({ timeout: 5000 }); // not covered: the click reaches the marker
    await expect(chat.viewer).toBeVisible();
    // tester: the narrowed message box wrapped its hint to two lines and showed a scroll arrow
    const box = chat.page.locator(".composer-input");
    await expect(box).toHaveValue("");
    expect(await box.evaluate((el) => el.scrollHeight - el.clientHeight)).toBeLessThanOrEqual(0);
    await chat.screenshot("wide-viewer-beside-answer");

    // tester: a marker's hover preview ran past the narrowed column, cut off there, with a scrollbar beneath
    const column = chat.page.locator(".messages");
    const inner = await column.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left + el.clientLeft, right: r.left + el.clientLeft + el.clientWidth };
    });
    expect(await markers.count()).toBeGreaterThan(1);
    for (const marker of await markers.all()) {
      await chat.page.mouse.move(0, 0); // away first: the last preview may cover the next marker
      await marker.hover();
      const preview = marker.locator("xpath=following-sibling::*[@role='tooltip']");
      await expect(preview).toBeVisible();
      const shown = (await preview.boundingBox())!;
      expect(shown.x).toBeGreaterThanOrEqual(inner.left);
      expect(shown.x + shown.width).toBeLessThanOrEqual(inner.right);
      expect(await column.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    }
    await chat.screenshot("wide-viewer-citation-preview");
  });
});
