// Open WebUI in headless Chromium: ask one question of a model, wait for the answer, report what the page shows.
// Usage: node frontend/scripts/openwebui-check.mjs <open-webui url> <model> <question> <expected text> <screenshot>
// Prints one JSON line: answer shown, status line, sources button, source names (bench/clients.py reads it).
import { chromium } from "@playwright/test";

const [url, model, question, expected, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
const result = { answer: false, status: null, sources_button: null, sources: [], error: null };
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${url}/?${new URLSearchParams({ models: model })}`, { timeout: 120_000 });
  const input = page.locator("#chat-input");
  await input.waitFor({ timeout: 120_000 });
  const whatsNew = page.getByRole("button", { name: /Okay, Let's Go/i });
  if (await whatsNew.count()) await whatsNew.click(); // the release notes shown on a first visit
  await input.click();
  await page.keyboard.type(question);
  await page.keyboard.press("Enter");
  const answer = page.getByText(expected).first();
  await answer.waitFor({ timeout: 90_000 });
  result.answer = true;
  await page.waitForTimeout(3000); // the last chunk (sources) and the done status arrive after the text
  const status = page.locator(".status-description, [class*='status']").first();
  result.status = (await status.count()) ? (await status.innerText()).trim() : null;
  const button = page.getByRole("button", { name: /source/i }).first();
  if (await button.count()) {
    result.sources_button = (await button.innerText()).trim();
    await button.click();
    await page.waitForTimeout(1000);
    result.sources = await page
      .locator("button, a, div")
      .filter({ hasText: /employee-handbook|S\d+:/ })
      .allInnerTexts();
    result.sources = [...new Set(result.sources.map((t) => t.trim()).filter((t) => t.length < 200))].slice(0, 10);
  }
  await page.screenshot({ path: screenshot, fullPage: true });
} catch (error) {
  result.error = String(error);
  const pages = browser.contexts().flatMap((c) => c.pages());
  if (pages.length) await pages[0].screenshot({ path: screenshot, fullPage: true }).catch(() => {});
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
