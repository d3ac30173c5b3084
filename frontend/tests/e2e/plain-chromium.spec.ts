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
