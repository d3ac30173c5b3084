/** Page objects for /admin (invitations, users) and /account (API keys, sessions). */
import { type Locator, type Page, expect } from "@playwright/test";

export class AdminPage {
  readonly invitations: Locator;
  readonly users: Locator;
  readonly shownOnce: Locator;

  constructor(readonly page: Page) {
    this.invitations = page.getByRole("table", { name: "Invitations" });
    this.users = page.getByRole("table", { name: "Users" });
    this.shownOnce = page.locator(".shown-once [data-secret]");
  }

  async goto(): Promise<void> {
    await this.page.goto("/admin");
    await expect(this.page.getByRole("heading", { name: "Admin", level: 1 })).toBeVisible();
  }

  /** Creates an invitation and returns its link, shown once. */
  async invite(email?: string): Promise<string> {
    if (email) await this.page.getByLabel("Invited e-mail (optional)").fill(email);
    await this.page.getByRole("button", { name: "Create invitation" }).click();
    await expect(this.shownOnce).toBeVisible();
    return (await this.shownOnce.textContent())!;
  }
}

export class AccountPage {
  readonly keys: Locator;
  readonly sessions: Locator;
  readonly secret: Locator;

  constructor(readonly page: Page) {
    this.keys = page.getByRole("table", { name: "API keys" });
    this.sessions = page.getByRole("table", { name: "Sessions" });
    this.secret = page.locator(".shown-once [data-secret]");
  }

  async goto(): Promise<void> {
    await this.page.goto("/account");
    await expect(this.page.getByRole("heading", { name: "Account", level: 1 })).toBeVisible();
  }

  /** Creates an API key and returns its secret, shown once. */
  async createKey(name: string): Promise<string> {
    await this.page.getByLabel("Key name").fill(name);
    await this.page.getByRole("button", { name: "Create key" }).click();
    await expect(this.secret).toBeVisible();
    return (await this.secret.textContent())!;
  }

  keyRow(name: string): Locator {
    return this.keys.locator(`tr[data-key="${name}"]`);
  }
}
