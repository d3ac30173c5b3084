/** Page object for the chat screen: every selector the e2e tests need lives here. */
import { type Locator, type Page, expect } from "@playwright/test";
import path from "node:path";
import { SCREENSHOTS } from "../e2e/stack";

export class ChatPage {
  readonly composer: Locator;
  readonly sendButton: Locator;
  readonly stopButton: Locator;
  readonly mentionPopup: Locator;
  readonly mentionOptions: Locator;
  readonly chips: Locator;
  readonly unknownChips: Locator;
  readonly composerWarning: Locator;
  /** "Follow-up questions search only …" above the box, with its "Search all documents" button. */
  readonly scopeNote: Locator;
  readonly sidebar: Locator;
  readonly heading: Locator;
  readonly menuButton: Locator;
  readonly banner: Locator;
  /** "Show me where": the document opened at a cited passage. */
  readonly viewer: Locator;
  readonly viewerSupport: Locator;
  readonly viewerPassage: Locator;
  readonly newChatButton: Locator;
  /** "Skip to message box": hidden until the keyboard focuses it, first in the tab order. */
  readonly skipLink: Locator;

  constructor(readonly page: Page) {
    this.composer = page.getByRole("combobox", { name: "Message" });
    this.sendButton = page.getByRole("button", { name: "Send" });
    this.stopButton = page.getByRole("button", { name: /^Stop/ });
    this.mentionPopup = page.getByRole("listbox", { name: "Documents" });
    this.mentionOptions = this.mentionPopup.getByRole("option");
    this.chips = page.getByRole("list", { name: "Mentioned documents" }).locator(".chip:not(.chip-unknown)");
    this.unknownChips = page.locator(".chip-unknown");
    this.composerWarning = page.locator(".composer-warning");
    this.scopeNote = page.locator(".composer-scope");
    this.sidebar = page.getByRole("complementary", { name: "Conversations" });
    this.heading = page.locator(".thread-heading");
    this.menuButton = page.getByRole("button", { name: "Conversations" });
    this.banner = page.locator(".banner");
    this.viewer = page.locator(".doc-viewer");
    this.viewerSupport = this.viewer.locator("mark.support");
    this.viewerPassage = this.viewer.locator("mark.passage");
    this.newChatButton = page.getByRole("button", { name: "+ New chat" });
    this.skipLink = page.getByRole("link", { name: "Skip to message box" });
  }

  /** Open the chat (a thread of it); `base` is another stack's frontend URL than the shared one. */
  async goto(threadId?: string, base = ""): Promise<void> {
    await this.page.goto(`${base}${threadId ? `/?thread=${encodeURIComponent(threadId)}` : "/"}`);
    await expect(this.composer).toBeVisible();
  }

  async type(text: string): Promise<void> {
    await this.composer.click();
    await this.composer.pressSequentially(text);
  }

  /** Types the question and presses Enter. */
  async ask(text: string): Promise<void> {
    await this.composer.fill(text);
    await this.composer.press("Enter");
  }

  async setMode(mode: "Auto" | "Documents" | "Chat"): Promise<void> {
    await this.page.getByRole("radio", { name: mode }).click();
  }

  // ---- the conversation ----

  userMessages(): Locator {
    return this.page.locator('[data-role="user"]');
  }

  answers(): Locator {
    return this.page.locator('[data-role="assistant"]');
  }

  lastAnswer(): AnswerView {
    return new AnswerView(this.answers().last());
  }

  async waitForAnswerDone(): Promise<AnswerView> {
    const answer = this.lastAnswer();
    await expect(answer.root).toHaveAttribute("data-state", "done", { timeout: 30_000 });
    return answer;
  }

  threadIdFromUrl(): string | null {
    return new URL(this.page.url()).searchParams.get("thread");
  }

  // ---- the sidebar ----

  thread(title: string | RegExp): Locator {
    return this.sidebar.locator(".thread").filter({ has: this.page.locator(".thread-title", { hasText: title }) });
  }

  threadById(id: string): Locator {
    return this.sidebar.locator(`.thread[data-thread="${id}"]`);
  }

  async renameThread(row: Locator, title: string): Promise<void> {
    await row.hover();
    await row.getByRole("button", { name: /^Rename/ }).click();
    const input = this.sidebar.getByRole("textbox", { name: "New title" });
    await input.fill(title);
    await input.press("Enter");
  }

  async deleteThread(row: Locator): Promise<void> {
    await row.hover();
    await row.getByRole("button", { name: /^Delete “/ }).click();
    await row.getByRole("group", { name: "Confirm delete" }).getByRole("button", { name: "Delete" }).click();
  }

  // ---- the keyboard ----

  /** Puts the keyboard at the top of the page, as on arriving there with nothing focused: Tab goes to the first stop. */
  async focusPageStart(): Promise<void> {
    await this.page.evaluate(() => {
      const body = document.body;
      body.tabIndex = -1; // the body takes the focus only so; the next Tab then starts from it
      body.focus();
      body.removeAttribute("tabindex");
    });
  }

  /**
   * Every stop the Tab key makes from the top of the page until `target` has the focus (not counting it), each
   * described by its tag and name, "(list)" after those inside the conversation list.
   */
  async tabStopsBefore(target: Locator, max = 100): Promise<string[]> {
    await this.focusPageStart();
    const stops: string[] = [];
    for (let i = 0; i < max; i++) {
      await this.page.keyboard.press("Tab");
      if (await target.evaluate((el) => el === document.activeElement)) return stops;
      stops.push(
        await this.page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          const name = (el.getAttribute("aria-label") || el.innerText || "").trim().split("\n")[0];
          return `${el.tagName.toLowerCase()} ${name}${el.closest(".threads ul") ? " (list)" : ""}`;
        }),
      );
    }
    throw new Error(`${max} Tab presses did not reach the target: ${stops.join(" | ")}`);
  }

  async screenshot(name: string): Promise<void> {
    await this.page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  }
}

/** One answer in the conversation. */
export class AnswerView {
  /** The model's words (the checks' closing notes are in `checkNote`). */
  readonly text: Locator;
  readonly steps: Locator;
  readonly statusLine: Locator;
  /** The one line saying what a running turn is doing now. */
  readonly liveLine: Locator;
  /** The live line saying the page lost the connection and is re-attaching to the run. */
  readonly reconnecting: Locator;
  /** An ended turn's summary ("3 passages from 2 documents · 6.2 s"): a button that shows and hides its steps. */
  readonly summary: Locator;
  /** The summary's text, whether or not it has steps to show (a button then, plain text otherwise). */
  readonly summaryText: Locator;
  readonly citations: Locator;
  readonly sourcesButton: Locator;
  readonly sourcesPanel: Locator;
  readonly sourceCards: Locator;
  readonly stoppedNote: Locator;
  readonly error: Locator;
  readonly retryButton: Locator;
  readonly badges: Locator;
  readonly copyButton: Locator;
  /** Sentences the source check found unsupported, underlined in the answer. */
  readonly unsupported: Locator;
  /** The closing paragraphs of Ragline's checks, set apart after the model's words (`text`). */
  readonly checkNote: Locator;

  constructor(readonly root: Locator) {
    this.text = root.locator(".answer > .markdown");
    this.steps = root.locator(".steps .step");
    this.statusLine = root.locator(".status-line");
    this.liveLine = root.locator(".status[data-running] .status-current");
    this.reconnecting = root.getByRole("status").filter({ hasText: /^Reconnecting/ });
    this.summary = root.locator(".status-toggle");
    this.summaryText = root.locator(".status-summary");
    this.citations = root.locator("button.cite-marker");
    this.sourcesButton = root.getByRole("button", { name: /Sources \(\d+\)|Hide sources/ });
    this.sourcesPanel = root.getByRole("region", { name: "Sources" });
    this.sourceCards = this.sourcesPanel.locator(".source-card");
    this.stoppedNote = root.locator(".turn-stopped");
    this.error = root.getByRole("alert");
    this.retryButton = root.getByRole("button", { name: "Retry" });
    this.badges = root.locator(".badge");
    this.copyButton = root.getByRole("button", { name: /Copy answer|Copied/ });
    this.unsupported = root.locator(".answer .unsupported");
    this.checkNote = root.getByRole("note", { name: "Note from Ragline's checks" });
  }

  /** Expand an ended turn's summary into its timeline of steps. */
  async showSteps(): Promise<void> {
    if ((await this.summary.getAttribute("aria-expanded")) !== "true") await this.summary.click();
    await expect(this.summary).toHaveAttribute("aria-expanded", "true");
  }

  /** The timeline step of one graph node (router, rewriter, retriever, generator, memory), once shown. */
  step(node: string): Locator {
    return this.steps.and(this.root.locator(`[data-node="${node}"]`)).last();
  }

  citation(id: string): Locator {
    return this.citations.and(this.root.locator(`[data-cite="${id}"]`)).first();
  }

  sourceCard(id: string): Locator {
    return this.sourcesPanel.locator(`.source-card[data-source="${id}"]`);
  }

  async textLength(): Promise<number> {
    return ((await this.text.textContent()) ?? "").length;
  }
}
