/** Page object for /sign-in: the first-run admin setup and the sign-in form. */
import { type Locator, type Page, expect } from "@playwright/test";

export class SignInPage {
  readonly heading: Locator;
  readonly email: Locator;
  readonly displayName: Locator;
  readonly password: Locator;
  readonly submit: Locator;
  readonly error: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1 });
    this.email = page.getByLabel("E-mail");
    this.displayName = page.getByLabel("Display name");
    this.password = page.getByLabel("Password");
    this.submit = page.getByRole("button", { name: /Sign in|Create account/ });
    this.error = page.locator(".auth-error");
  }

  async expectOpen(kind: "setup" | "sign-in"): Promise<void> {
    await expect(this.page).toHaveURL(/\/sign-in$/);
    await expect(this.heading).toHaveText(kind === "setup" ? "Create the admin account" : "Sign in to Ragline");
  }

  async fill(email: string, password: string, displayName?: string): Promise<void> {
    await this.email.fill(email);
    if (displayName !== undefined) await this.displayName.fill(displayName);
    await this.password.fill(password);
    await this.submit.click();
  }
}
