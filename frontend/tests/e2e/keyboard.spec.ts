import { backendUrl, expect, test } from "./fixtures";

test("a skip link, first in the tab order and hidden until focused, leads to the message box", async ({
  chat,
  page,
}) => {
  await chat.goto();
  expect((await chat.skipLink.boundingBox())?.width ?? 0).toBeLessThanOrEqual(1);
  await chat.focusPageStart();
  await page.keyboard.press("Tab");
  await expect(chat.skipLink).toBeFocused();
  expect((await chat.skipLink.boundingBox())!.width).toBeGreaterThan(50);
  await expect(chat.skipLink).toBeInViewport();
  await page.keyboard.press("Enter");
  await expect(chat.composer).toBeFocused();
  expect(page.url()).not.toContain("#"); // the link moves the focus, nothing else
});

test("the conversation list is one tab stop; the arrow keys move between conversations and to Rename and Delete", async ({
  chat,
  page,
  request,
}) => {
  // Tester: three stops a conversation (link, Rename, Delete), about 60 Tab presses past 20 conversations.
  for (const n of [1, 2, 3]) {
    await request.post(`${backendUrl()}/api/chat`, { data: { message: `Tab stop ${n}`, mode: "chat" } });
  }
  await chat.goto();
  await expect(chat.thread("Tab stop 1")).toBeVisible();
  const stops = await chat.tabStopsBefore(chat.composer);
  expect(
    stops.filter((s) => s.endsWith("(list)")),
    stops.join(" | "),
  ).toHaveLength(1);

  // The list's stop is its first conversation (none is open); Down, Right and Left move from there.
  const rows = chat.sidebar.locator(".thread");
  const first = rows.nth(0);
  const second = rows.nth(1);
  await first.locator(".thread-link").focus();
  await page.keyboard.press("ArrowDown");
  await expect(second.locator(".thread-link")).toBeFocused();
  await page.keyboard.press("ArrowRight");
  await expect(second.getByRole("button", { name: /^Rename/ })).toBeFocused();
  await expect(second.getByRole("button", { name: /^Rename/ })).toBeVisible();
  await page.keyboard.press("ArrowRight");
  await expect(second.getByRole("button", { name: /^Delete “/ })).toBeFocused();
  await page.keyboard.press("ArrowUp");
  await expect(first.getByRole("button", { name: /^Delete “/ })).toBeFocused();
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  await expect(first.locator(".thread-link")).toBeFocused();
  await page.keyboard.press("End");
  await expect(rows.last().locator(".thread-link")).toBeFocused();
  await page.keyboard.press("Home");
  await expect(first.locator(".thread-link")).toBeFocused();

  // Rename from the keyboard, and back in the list after it.
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("Enter");
  await expect(chat.sidebar.getByRole("textbox", { name: "New title" })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(second.locator(".thread-link")).toBeFocused();
  // The list remembers where the reader was: Tab from the top enters it at that conversation.
  const back = await chat.tabStopsBefore(second.locator(".thread-link"));
  expect(back.filter((s) => s.endsWith("(list)"))).toHaveLength(0);
});
