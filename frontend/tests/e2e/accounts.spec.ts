/**
 * RAG_AUTH=local on its own backend: the first visit creates the admin, whose question is answered (the UI sends the
 * CSRF token with the session cookie); the admin adds Bob; in a second browser Bob must sign in, a wrong password is
 * refused, the right one lands on the chat without the admin's thread; a link to it reads as a conversation that
 * does not exist, and asking there starts Bob's own.
 */
import { ChatPage } from "../pages/chat-page";
import { SignInPage } from "../pages/sign-in-page";
import { expect, test } from "./fixtures";
import { type Backend, type Frontend, removeDir, startBackend, startFrontend } from "./stack";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
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

test("first visit sets up the admin, who chats; another browser signs in and sees none of it", async ({ browser }) => {
  const adminContext = await browser.newContext({ baseURL: frontend.url });
  const adminPage = await adminContext.newPage();
  await adminPage.goto("/");
  const setup = new SignInPage(adminPage);
  await setup.expectOpen("setup");
  await setup.fill("ann@team.org", PASSWORD, "Ann");
  const chat = new ChatPage(adminPage);
  await expect(chat.composer).toBeVisible();
  await chat.setMode("Chat");
  await chat.ask("Hello there");
  await chat.waitForAnswerDone();
  await expect(chat.sidebar.locator(".thread")).toHaveCount(1);
  const annThread = chat.threadIdFromUrl();
  expect(annThread).toBeTruthy();

  const bob = { email: "bob@team.org", password: PASSWORD };
  const noToken = await adminContext.request.post(`${frontend.url}/api/users`, { data: bob });
  expect(noToken.status()).toBe(403); // a write with the cookie but without the CSRF header
  const status = await (await adminContext.request.get(`${frontend.url}/api/auth/status`)).json();
  const created = await adminContext.request.post(`${frontend.url}/api/users`, {
    data: bob,
    headers: { "X-CSRF-Token": status.csrf_token },
  });
  expect(created.status()).toBe(201);

  const otherContext = await browser.newContext({ baseURL: frontend.url });
  const otherPage = await otherContext.newPage();
  await otherPage.goto("/");
  const signIn = new SignInPage(otherPage);
  await signIn.expectOpen("sign-in");
  await signIn.fill("bob@team.org", "wrong password");
  await expect(signIn.error).toHaveText("Wrong e-mail or password");
  await signIn.fill("bob@team.org", PASSWORD);
  const bobChat = new ChatPage(otherPage);
  await expect(bobChat.composer).toBeVisible();
  await expect(bobChat.sidebar.locator(".thread")).toHaveCount(0); // Ann's thread is not Bob's

  // Asked while the link's thread is still loading (its answer held back here): the ask itself is refused, and
  // the page leaves the thread at once, the question back in the box, with no error and no Retry.
  const threadUrl = `**/api/threads/${annThread}`;
  let release = () => {};
  await otherPage.route(threadUrl, (route) => {
    release = () => void route.continue();
  });
  await bobChat.goto(annThread!);
  await bobChat.setMode("Chat");
  await bobChat.ask("hello there");
  await expect(bobChat.banner).toContainText("does not exist for you");
  await expect(bobChat.composer).toHaveValue("hello there");
  await expect(bobChat.answers()).toHaveCount(0);
  const loaded = otherPage.waitForResponse((r) => r.url().endsWith(`/api/threads/${annThread}`));
  release();
  expect((await loaded).status()).toBe(404);
  await otherPage.unroute(threadUrl);

  // A link to Ann's thread reads to Bob as a conversation that does not exist; asking starts his own.
  await bobChat.goto(annThread!);
  await expect(bobChat.banner).toContainText("does not exist for you");
  await bobChat.ask("hello there");
  await bobChat.waitForAnswerDone();
  await expect(bobChat.lastAnswer().error).toHaveCount(0);
  await expect(otherPage.getByText(/http_404|GET \/api\/threads/)).toHaveCount(0);
  await expect(bobChat.banner).toHaveCount(0);
  await expect.poll(() => bobChat.threadIdFromUrl()).not.toBe(annThread);
  const bobThread = bobChat.threadIdFromUrl();
  expect(bobThread).toBeTruthy();
  await expect(bobChat.threadById(bobThread!)).toBeVisible();
  await expect(bobChat.sidebar.locator(".thread")).toHaveCount(1);
  await adminPage.reload();
  await expect(chat.userMessages()).toHaveText(["Hello there"]); // Ann's thread is untouched
  await bobChat.sidebar.getByRole("button", { name: "Sign out" }).click();
  await signIn.expectOpen("sign-in");
  await otherPage.goto("/");
  await signIn.expectOpen("sign-in"); // the session is over: the chat sends Bob back
  await adminContext.close();
  await otherContext.close();
});
