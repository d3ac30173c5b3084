/** Page objects for /admin (invitations, users, groups, collections) and /account (API keys, sessions). */
import { type Locator, type Page, expect } from "@playwright/test";

export class AdminPage {
  readonly invitations: Locator;
  readonly users: Locator;
  readonly shownOnce: Locator;
  /** The failure shown in the Groups section, and in the Collections section. */
  readonly groupsAlert: Locator;
  readonly collectionsAlert: Locator;

  constructor(readonly page: Page) {
    this.invitations = page.getByRole("table", { name: "Invitations" });
    this.users = page.getByRole("table", { name: "Users" });
    this.shownOnce = page.locator(".shown-once [data-secret]");
    this.groupsAlert = page.getByRole("region", { name: "Groups" }).getByRole("alert");
    this.collectionsAlert = page.getByRole("region", { name: "Collections" }).getByRole("alert");
  }

  group(name: string): Locator {
    return this.page.locator(`li[data-group="${name}"]`);
  }

  collection(name: string): Locator {
    return this.page.locator(`li[data-collection="${name}"]`);
  }

  async createGroup(name: string): Promise<void> {
    await this.page.getByLabel("Group name").fill(name);
    await this.page.getByRole("button", { name: "Create group" }).click();
    await expect(this.group(name)).toBeVisible();
  }

  async createCollection(name: string, kind: "team" | "group" = "team"): Promise<void> {
    await this.page.getByLabel("Collection name").fill(name);
    await this.page.getByLabel("Kind").selectOption(kind);
    await this.page.getByRole("button", { name: "Create collection" }).click();
    await expect(this.collection(name)).toBeVisible();
  }

  private item(what: "group" | "collection", name: string): Locator {
    return what === "group" ? this.group(name) : this.collection(name);
  }

  /** Opens the item's inline rename form, types the new name and saves (the result is for the test to check). */
  async rename(what: "group" | "collection", name: string, to: string): Promise<void> {
    const item = this.item(what, name);
    await item.getByRole("button", { name: `Rename ${what} ${name}` }).click();
    await item.getByLabel(`New name for ${name}`).fill(to);
    await item.getByRole("button", { name: "Save" }).click();
  }

  /** The confirmation step of deleting a group or a collection, once asked for. */
  confirmation(what: "group" | "collection", name: string): Locator {
    return this.item(what, name).getByRole("group", { name: `Confirm deleting ${what} ${name}` });
  }

  /** Asks to delete the item and confirms (the result is for the test to check). */
  async delete(what: "group" | "collection", name: string): Promise<void> {
    await this.item(what, name)
      .getByRole("button", { name: `Delete ${what} ${name}` })
      .click();
    await this.confirmation(what, name)
      .getByRole("button", { name: `Delete ${what}` })
      .click();
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
