import { CHROMIUM, CHROMIUM_ARGS } from "../../playwright.config";
import { backendUrl, expect, test } from "./fixtures";

/**
 * Chromium as the tester ran it, not as Playwright launches it: Playwright hides scrollbars and pretends a mouse.
 * Here scrollbars take room, and the computer has no mouse or touch screen (a keyboard-only setup, or a browser on a
 * server), where Chromium reports (hover: none) and (pointer: none): this later --blink-settings wins over
 * Playwright's.
 */
const NO_POINTER =
  "--blink-settings=primaryHoverType=1,availableHoverTypes=1,primaryPointerType=1,availablePointerTypes=1";

test.use({
  launchOptions: {
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS, NO_POINTER],
    ignoreDefaultArgs: ["--hide-scrollbars"],
  },
  viewport: { width: 1400, height: 900 }, // the tester's window
});

test("the message box has the focus on opening the app, after New chat and after opening a conversation", async ({
  chat,
  page,
  request,
}) => {
  // Tester (no mouse): the focus stayed on the page, then on New chat; the box took the machine for a touch screen.
  expect(await page.evaluate(() => matchMedia("(hover: none) and (pointer: none)").matches)).toBe(true);
  const asked = await request.post(`${backendUrl()}/api/chat`, { data: { message: "Focus check", mode: "chat" } });
  const { thread_id: threadId } = await asked.json();
  await page.goto("/");
  await expect(chat.composer).toBeFocused();
  await page.keyboard.type("typed at once");
  await expect(chat.composer).toHaveValue("typed at once");
  await chat.composer.fill("");

  await chat.threadById(threadId).locator(".thread-link").focus();
  await page.keyboard.press("Enter");
  await expect(chat.userMessages()).toHaveText(["Focus check"]);
  await expect(chat.composer).toBeFocused();

  await chat.newChatButton.focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/$/);
  await expect(chat.composer).toBeFocused();
});

test("a PDF page fits the viewer's width, with the sentence's box still over its words", async ({ chat }) => {
  // Tester: the page was drawn wider than the pane (its border, then the scrollbar once it was drawn): it scrolled
  // sideways.
  await chat.goto();
  await chat.ask("@travel-policy.pdf What is the hotel limit per night?");
  const answer = await chat.waitForAnswerDone();
  await answer.citation("S1").click();
  const page = chat.viewer.locator(".pdf-page");
  await expect(page).toHaveAttribute("data-status", "ready");
  const body = chat.viewer.locator(".doc-viewer-body");
  await expect.poll(() => body.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
  const canvas = page.locator("canvas.pdf-canvas");
  const sheet = (await canvas.boundingBox())!;
  const box = (await page.locator(".pdf-support").first().boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(sheet.x);
  expect(box.x + box.width).toBeLessThanOrEqual(sheet.x + sheet.width + 0.5);
  // The box is over text: dark pixels of the drawn page lie under it.
  const dark = await canvas.evaluate(
    (c: HTMLCanvasElement, { box, sheet }) => {
      const sx = c.width / sheet.width;
      const sy = c.height / sheet.height;
      const x = Math.round((box.x - sheet.x) * sx);
      const y = Math.round((box.y - sheet.y) * sy);
      const data = c.getContext("2d")!.getImageData(x, y, Math.round(box.width * sx), Math.round(box.height * sy));
      let n = 0;
      for (let i = 0; i < data.data.length; i += 4) n += data.data[i] < 128 ? 1 : 0;
      return n / (data.data.length / 4);
    },
    { box, sheet },
  );
  expect(dark).toBeGreaterThan(0.05);
  await chat.screenshot("show-me-where-pdf-fit");
});
