/**
 * RAG_AUTH=local on its own backend: the admin sets up and invites from /admin; in a second browser the link creates
 * Cleo's account. The admin's upload into their personal collection never shows on Cleo's documents page; Cleo makes
 * an API key on /account, sees it listed, and it works as a bearer token; her job title is saved for the prompts.
 */
import { AccountPage, AdminPage } from "../pages/admin-page";
import { DocumentsPage } from "../pages/documents-page";
import { SignInPage } from "../pages/sign-in-page";
import { expect, test } from "./fixtures";
import { type Backend, type Frontend, removeDir, startBackend, startFrontend } from "./stack";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
const PRIVATE = "# Ann's notes\n\nThe numbat budget for next year is private to Ann.\n";
let backend: Backend;
let frontend: Frontend;

test.beforeAll(async () => {
  backend = await startBackend(process.env.E2E_TEMPLATE_DIR!, { RAG_AUTH: "local" });
  frontend = await startFrontend(backend.url);
});

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
  const context = await browser.newContext({ baseURL: frontend.url });
  const page = await context.newPage();
  await page.goto("/sign-in");
  await new SignInPage(page).fill("ann@team.org", PASSWORD);
  await expect(page.getByRole("link", { name: "Admin" })).toBeVisible();
  const admin = new AdminPage(page);
  await admin.goto();

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
