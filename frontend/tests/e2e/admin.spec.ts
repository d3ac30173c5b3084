/**
 * RAG_AUTH=local on its own backend: the admin sets up and invites from /admin; in a second browser the link creates
 * Cleo's account. The admin's upload into their personal collection never shows on Cleo's documents page; Cleo makes
 * an API key on /account, sees it listed, and it works as a bearer token; her job title is saved for the prompts.
 * The admin renames and deletes collections (one holding a document only once it is moved out, from /documents) and
 * groups (the collections shared with one are then shared no more). At 390 px both pages keep every action on
 * screen.
 */
import path from "node:path";
import type { Browser, BrowserContext, Locator, Page } from "@playwright/test";
import { AccountPage, AdminPage } from "../pages/admin-page";
import { DocumentsPage } from "../pages/documents-page";
import { SignInPage } from "../pages/sign-in-page";
import { expect, test } from "./fixtures";
import { type Backend, type Frontend, SCREENSHOTS, removeDir, startBackend, startFrontend } from "./stack";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
const PRIVATE = "# Ann's notes\n\nThe numbat budget for next year is private to Ann.\n";
const ARCHIVED = "# Archived note\n\nThe old wombat roster lived in the archive.\n";
let backend: Backend;
let frontend: Frontend;

test.beforeAll(async () => {
  backend = await startBackend(process.env.E2E_TEMPLATE_DIR!, { RAG_AUTH: "local" });
  frontend = await startFrontend(backend.url);
});

/** Ann, the first admin, signed in in a context of her own (of the viewport given), on the admin page. */
async function annOnTheAdminPage(
  browser: Browser,
  viewport?: { width: number; height: number },
): Promise<{ context: BrowserContext; page: Page; admin: AdminPage }> {
  const context = await browser.newContext({ baseURL: frontend.url, ...(viewport ? { viewport } : {}) });
  const page = await context.newPage();
  await page.goto("/sign-in");
  await new SignInPage(page).fill("ann@team.org", PASSWORD);
  await expect(page.getByRole("link", { name: "Admin" })).toBeVisible();
  const admin = new AdminPage(page);
  await admin.goto();
  return { context, page, admin };
}

test.afterAll(async () => {
  await frontend?.stop();
  await backend?.stop();
  removeDir(backend?.dataDir);
});

test("the admin invites from /admin, the invited user joins, cannot see the admin's upload, makes an API key", async ({
  browser,
}) => {
  const annContext = await browser.newContext({ baseURL: frontend.url });
  const ann = await annContext.newPage();
  await ann.goto("/");
  const setup = new SignInPage(ann);
  await setup.expectOpen("setup");
  await setup.fill("ann@team.org", PASSWORD, "Ann");
  await expect(ann.getByRole("link", { name: "Admin" })).toBeVisible();
  await ann.getByRole("link", { name: "Admin" }).click();
  const admin = new AdminPage(ann);
  await expect(ann.getByRole("heading", { name: "Admin", level: 1 })).toBeVisible();
  await expect(admin.users.locator('tr[data-user="ann@team.org"]')).toContainText("you");
  const link = await admin.invite("cleo@team.org");
  expect(link).toMatch(/\/sign-in\?invite=/);
  await expect(admin.invitations.locator("tbody tr")).toHaveCount(1);
  await expect(admin.invitations.locator('tr[data-status="open"]')).toContainText("cleo@team.org");
  await expect(ann.getByLabel("Invited e-mail (optional)")).toHaveValue(""); // ready for the next person
  await ann.getByLabel("Invited e-mail (optional)").fill("ANN@team.org"); // has an account: refused at once
  await ann.getByRole("button", { name: "Create invitation" }).click();
  await expect(ann.getByRole("alert").filter({ hasText: "already has an account" })).toContainText("ANN@team.org");
  await expect(admin.invitations.locator("tbody tr")).toHaveCount(1);

  const cleoContext = await browser.newContext({ baseURL: frontend.url });
  const cleo = await cleoContext.newPage();
  await cleo.goto(link);
  await expect(cleo.getByText(/You were invited/)).toBeVisible();
  await cleo.getByLabel("Display name").fill("Cleo");
  await cleo.getByLabel("Password").fill(PASSWORD);
  await cleo.getByRole("button", { name: "Create account and sign in" }).click();
  await expect(cleo.getByRole("link", { name: "Account" })).toBeVisible();
  await expect(cleo.getByRole("link", { name: "Admin" })).toHaveCount(0); // not an admin
  await cleo.goto("/admin");
  await expect(cleo.locator(".banner")).toHaveText(/^Only an admin/);

  const annDocs = new DocumentsPage(ann);
  await annDocs.goto();
  await expect(ann.getByLabel("Upload into collection")).toHaveValue(""); // personal by default
  await annDocs.upload([{ name: "ann-notes.md", mimeType: "text/markdown", buffer: Buffer.from(PRIVATE) }]);
  await expect(annDocs.status("ann-notes.md")).toHaveText(/ready/, { timeout: 30_000 });
  const cleoDocs = new DocumentsPage(cleo);
  await cleoDocs.goto();
  await expect(cleoDocs.status("employee-handbook.md")).toHaveText(/ready/); // the team's documents load
  await expect(cleoDocs.row("ann-notes.md")).toHaveCount(0);
  // the team collection is read-only to users: no Delete (the server would refuse it) and no Move…
  const handbook = cleoDocs.row("employee-handbook.md");
  await expect(handbook.getByRole("button", { name: "Delete employee-handbook.md" })).toHaveCount(0);
  await expect(cleoDocs.moveButton("employee-handbook.md")).toHaveCount(0);

  const account = new AccountPage(cleo);
  await account.goto();
  await expect(cleo.locator(".profile")).toContainText("cleo@team.org");
  await expect(account.sessions.locator("tr[data-current]")).toHaveCount(1);
  const key = await account.createKey("laptop script");
  await expect(account.keyRow("laptop script")).toContainText(key.slice(0, 10));
  const me = await cleoContext.request.get(`${frontend.url}/api/me`, { headers: { Authorization: `Bearer ${key}` } });
  expect((await me.json()).email).toBe("cleo@team.org");
  await cleo.getByLabel("Job title").fill("Field engineer");
  await cleo.getByRole("button", { name: "Save" }).click();
  await expect(cleo.getByText("Saved.")).toBeVisible();
  await account.goto();
  await expect(cleo.getByLabel("Job title")).toHaveValue("Field engineer"); // stored, and shown after a reload

  await ann.goto("/admin");
  await expect(admin.invitations.locator('tr[data-status="used"]')).toHaveCount(1);
  await annContext.close();
  await cleoContext.close();
});

test("the admin adds and deletes a user, makes a group with a member and shares a group collection with it", async ({
  browser,
}) => {
  const { context, page, admin } = await annOnTheAdminPage(browser);

  const users = page.getByRole("form", { name: "Add a user" });
  await users.getByLabel("E-mail").fill("dan@team.org");
  await users.getByLabel("Name").fill("Dan");
  await users.getByLabel("Password").fill(PASSWORD);
  await users.getByRole("button", { name: "Add user" }).click();
  const dan = admin.users.locator('tr[data-user="dan@team.org"]');
  await expect(dan).toContainText("Dan");

  await page.getByLabel("Group name").fill("Finance");
  await page.getByRole("button", { name: "Create group" }).click();
  const group = page.locator('li[data-group="Finance"]');
  await group.getByLabel("Add a member to Finance").selectOption({ label: "Cleo (cleo@team.org)" });
  await group.getByRole("button", { name: "Add" }).click();
  await expect(group.locator(".chip")).toHaveText([/Cleo/]);

  await page.getByLabel("Collection name").fill("Budgets");
  await page.getByLabel("Kind").selectOption("group");
  await page.getByRole("button", { name: "Create collection" }).click();
  const budgets = page.locator('li[data-collection="Budgets"]');
  await budgets.getByLabel("Share Budgets with").selectOption({ label: "Finance" });
  await budgets.getByLabel("Access").selectOption("write");
  await budgets.getByRole("button", { name: "Share" }).click();
  await expect(budgets.locator(".chip")).toHaveText([/Finance: read-write/]);

  await dan.getByRole("button", { name: "Delete dan@team.org" }).click();
  await dan.getByRole("button", { name: /Delete with their/ }).click();
  await expect(dan).toHaveCount(0);
  await context.close();
});

test("the admin renames a collection, cannot delete it while it holds a document, moves that out, then deletes it", async ({
  browser,
}) => {
  const { context, page, admin } = await annOnTheAdminPage(browser);

  await admin.createCollection("Drafts");
  await admin.createCollection("Old notes");
  await expect(admin.collection("Personal")).toContainText("Personal (yours)");
  await expect(admin.collection("Personal").getByRole("button")).toHaveCount(0); // never renamed nor deleted

  await admin.rename("collection", "Old notes", "Drafts");
  await expect(admin.collectionsAlert).toHaveText("A collection named 'Drafts' exists already");
  await admin.collection("Old notes").getByRole("button", { name: "Cancel" }).click();
  await admin.rename("collection", "Old notes", "Archive");
  await expect(admin.collection("Archive").locator("strong")).toHaveText("Archive");
  await expect(admin.collection("Old notes")).toHaveCount(0);
  await expect(admin.collectionsAlert).toHaveCount(0);

  const documents = new DocumentsPage(page);
  await documents.goto();
  await page.getByLabel("Upload into collection").selectOption({ label: "Archive (team)" });
  await documents.upload([{ name: "archive-note.md", mimeType: "text/markdown", buffer: Buffer.from(ARCHIVED) }]);
  await expect(documents.status("archive-note.md")).toHaveText(/ready/, { timeout: 30_000 });
  await expect(documents.collection("archive-note.md")).toHaveText("Archive");

  await admin.goto();
  await admin.delete("collection", "Archive");
  await expect(admin.collectionsAlert).toHaveText(
    "The collection 'Archive' still holds 1 document: move them to another collection or delete them first",
  );
  await page.reload();
  await expect(admin.collection("Archive")).toBeVisible(); // kept, with its document

  await documents.goto();
  await documents.moveButton("archive-note.md").click();
  await expect(documents.movePicker("archive-note.md").locator("option", { hasText: "Drafts (team)" })).toHaveCount(1);
  await expect(documents.movePicker("archive-note.md").locator("option", { hasText: "Archive" })).toHaveCount(0);
  await documents.move("archive-note.md", "Drafts (team)");
  await expect(documents.collection("archive-note.md")).toHaveText("Drafts");
  await page.reload();
  await expect(documents.collection("archive-note.md")).toHaveText("Drafts"); // moved on the server

  // A second archive-note.md, in Ann's personal collection, cannot join the first one in Drafts: the row says why.
  const copy = Buffer.from("# Archived note\n\nAnn's own copy of the archive note.\n");
  await documents.upload([{ name: "archive-note.md", mimeType: "text/markdown", buffer: copy }]);
  const personal = documents
    .row("archive-note.md")
    .filter({ has: page.locator("td[data-collection]", { hasText: /^Personal$/ }) });
  await expect(personal).toHaveCount(1);
  await expect(personal.locator(".doc-status")).toHaveText(/ready/, { timeout: 30_000 });
  // the row's actions are in view on a 1280-pixel screen, not scrolled off past the table's right edge
  await expect(personal.getByRole("button", { name: "Delete archive-note.md" })).toBeInViewport({ ratio: 1 });
  await personal.getByRole("button", { name: "Move archive-note.md to another collection" }).click();
  await personal.getByLabel("Move archive-note.md to", { exact: true }).selectOption({ label: "Drafts (team)" });
  await personal.getByRole("button", { name: "Move", exact: true }).click();
  await expect(documents.rowError("archive-note.md")).toHaveText(
    "That collection already holds a document named 'archive-note.md': delete one of them first",
  );
  await expect(personal.locator("td[data-collection]")).toHaveText("Personal");
  await personal.getByRole("button", { name: "Cancel" }).click();
  await personal.getByRole("button", { name: "Delete archive-note.md" }).click();
  await personal.getByRole("button", { name: "Delete", exact: true }).click();
  await expect(personal).toHaveCount(0);
  await expect(documents.collection("archive-note.md")).toHaveText("Drafts");

  await admin.goto();
  await admin.delete("collection", "Archive");
  await expect(admin.collection("Archive")).toHaveCount(0);
  await expect(admin.collectionsAlert).toHaveCount(0);
  await page.reload();
  await expect(admin.collection("Drafts")).toBeVisible();
  await expect(admin.collection("Archive")).toHaveCount(0);

  // Cleo (a user) may read the team collections but write only her personal one: she is offered no move.
  const cleoContext = await browser.newContext({ baseURL: frontend.url });
  const cleo = await cleoContext.newPage();
  await cleo.goto("/sign-in");
  await new SignInPage(cleo).fill("cleo@team.org", PASSWORD);
  await expect(cleo.getByRole("link", { name: "Account" })).toBeVisible();
  const cleoDocs = new DocumentsPage(cleo);
  await cleoDocs.goto();
  await expect(cleoDocs.collection("archive-note.md")).toHaveText("Drafts");
  await expect(cleoDocs.status("employee-handbook.md")).toHaveText(/ready/);
  await expect(cleoDocs.moveButton("archive-note.md")).toHaveCount(0);
  await expect(cleoDocs.moveButton("employee-handbook.md")).toHaveCount(0);
  await cleoContext.close();
  await context.close();
});

test("the admin renames a group and deletes it, which ends the collection shares it had", async ({ browser }) => {
  const { context, page, admin } = await annOnTheAdminPage(browser);

  await admin.createGroup("Ops");
  await admin.createGroup("Sales");
  await admin.rename("group", "Sales", "ops");
  await expect(admin.groupsAlert).toHaveText("A group named 'ops' exists already");
  await admin.group("Sales").getByRole("button", { name: "Cancel" }).click();
  await admin.rename("group", "Ops", "Operations");
  await expect(admin.group("Operations").locator("strong")).toHaveText("Operations");
  await expect(admin.group("Ops")).toHaveCount(0);

  await admin.createCollection("Runbooks", "group");
  const runbooks = admin.collection("Runbooks");
  await runbooks.getByLabel("Share Runbooks with").selectOption({ label: "Operations" });
  await runbooks.getByRole("button", { name: "Share" }).click();
  await expect(runbooks.locator(".chip")).toHaveText([/Operations: read/]);

  await admin.group("Operations").getByRole("button", { name: "Delete group Operations" }).click();
  await expect(admin.confirmation("group", "Operations")).toContainText(
    "the collections shared with it stop being shared with its members",
  );
  await admin.confirmation("group", "Operations").getByRole("button", { name: "Delete group" }).click();
  await expect(admin.group("Operations")).toHaveCount(0);
  await expect(runbooks.locator(".chip")).toHaveCount(0);
  await expect(runbooks).toContainText("shared with no group yet");
  await page.reload();
  await expect(admin.group("Sales")).toBeVisible();
  await expect(admin.group("Operations")).toHaveCount(0);
  await context.close();
});

/** The button lies within the page's width, and neither the page nor a table beside it scrolls sideways. */
async function expectWithinWidth(button: Locator): Promise<void> {
  const page = button.page();
  const box = (await button.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(page.viewportSize()!.width);
  const sideways = await page.evaluate(() =>
    [document.documentElement, ...document.querySelectorAll(".table-wrap")].map(
      (el) => el.scrollWidth - el.clientWidth,
    ),
  );
  expect(Math.max(...sideways)).toBeLessThanOrEqual(0);
}

test("at 390 px every action of /admin and /account is on screen, none in a table that scrolls sideways", async ({
  browser,
}) => {
  // tester: Delete, Revoke and Sign out sat past the right edge, in tables that scrolled sideways
  // (a plain viewport, not isMobile: a mobile one widens itself to the content, hiding what scrolls sideways)
  const { context, page, admin } = await annOnTheAdminPage(browser, { width: 390, height: 844 });
  await admin.invite(); // an open invitation, with its Revoke
  const cleo = admin.users.locator('tr[data-user="cleo@team.org"]');
  await expectWithinWidth(cleo.getByRole("button", { name: "Delete cleo@team.org" }));
  await cleo.getByRole("button", { name: "Delete cleo@team.org" }).click();
  await expectWithinWidth(cleo.getByRole("button", { name: /Delete with their/ }));
  await expectWithinWidth(cleo.getByRole("button", { name: "Cancel" }));
  await cleo.getByRole("button", { name: "Cancel" }).click();
  await expectWithinWidth(admin.invitations.locator('tr[data-status="open"]').getByRole("button", { name: "Revoke" }));
  await expectWithinWidth(admin.collection("Drafts").getByRole("button", { name: "Delete collection Drafts" }));
  await page.screenshot({ path: path.join(SCREENSHOTS, "admin-390.png"), fullPage: true });

  const account = new AccountPage(page);
  await account.goto();
  await account.createKey("phone check");
  await expectWithinWidth(account.keyRow("phone check").getByRole("button", { name: "Revoke phone check" }));
  const signOuts = account.sessions.getByRole("button", { name: "Sign out" });
  expect(await signOuts.count()).toBeGreaterThan(1);
  for (const button of await signOuts.all()) await expectWithinWidth(button);
  await page.screenshot({ path: path.join(SCREENSHOTS, "account-390.png"), fullPage: true });
  await account.keyRow("phone check").getByRole("button", { name: "Revoke phone check" }).click();
  await expect(account.keyRow("phone check")).toContainText("revoked");
  await context.close();
});
