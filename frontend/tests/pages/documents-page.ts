/** Page object for the documents page: upload, list, delete. */
import { type Locator, type Page, expect } from "@playwright/test";
import path from "node:path";
import { SCREENSHOTS } from "../e2e/stack";

export class DocumentsPage {
  readonly fileInput: Locator;
  readonly uploads: Locator;
  readonly rows: Locator;

  constructor(readonly page: Page) {
    this.fileInput = page.getByLabel("Choose files to upload");
    this.uploads = page.getByRole("list", { name: "Uploads" }).locator(".upload");
    this.rows = page.locator(".docs-table tbody tr[data-document]");
  }

  async goto(): Promise<void> {
    await this.page.goto("/documents");
    await expect(this.page.getByRole("heading", { name: "Documents" })).toBeVisible();
  }

  row(name: string): Locator {
    return this.page.locator(`.docs-table tbody tr[data-document="${name}"]`);
  }

  status(name: string): Locator {
    return this.row(name).locator(".doc-status");
  }

  async upload(files: { name: string; mimeType: string; buffer: Buffer }[]): Promise<void> {
    await this.fileInput.setInputFiles(files);
  }

  async delete(name: string): Promise<void> {
    const row = this.row(name);
    await row.getByRole("button", { name: `Delete ${name}` }).click();
    await row.getByRole("button", { name: "Delete", exact: true }).click();
  }

  async screenshot(name: string): Promise<void> {
    await this.page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  }
}
