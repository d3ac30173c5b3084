import { expect, test } from "./fixtures";

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
