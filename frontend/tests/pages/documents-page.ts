/** Page object for the documents page: upload, list, move to another collection, delete. */
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

  /** The per-file lines of an upload: what was accepted, and each refused file with its reason. */
  uploadFiles(upload: Locator): Locator {
    return upload.locator(".upload-file");
  }

  refusedFiles(upload: Locator): Locator {
    return upload.locator(".upload-file[data-refused]");
  }

  row(name: string): Locator {
    return this.page.locator(`.docs-table tbody tr[data-document="${name}"]`);
  }

  status(name: string): Locator {
    return this.row(name).locator(".doc-status");
  }

  /** Why the last move or delete of the document failed, in a row under its own. */
  rowError(name: string): Locator {
    return this.page.locator(`.docs-table tbody tr[data-error-for="${name}"]`).getByRole("alert");
  }

  /** The row's Collection cell (accounts on). */
  collection(name: string): Locator {
    return this.row(name).locator("td[data-collection]");
  }

  /** The row's "Move…" button (accounts on, when the user may write its collection and another one). */
  moveButton(name: string): Locator {
    return this.row(name).getByRole("button", { name: `Move ${name} to another collection` });
  }

  /** The row's "Move to…" picker, once its Move… button is pressed. */
  movePicker(name: string): Locator {
    return this.row(name).getByLabel(`Move ${name} to`, { exact: true });
  }

  /** Moves the document into the collection the picker labels `label` ("Drafts (team)", "Personal (only you)"). */
  async move(name: string, label: string): Promise<void> {
    if (!(await this.movePicker(name).isVisible())) await this.moveButton(name).click();
    await this.movePicker(name).selectOption({ label });
    await this.row(name).getByRole("button", { name: "Move", exact: true }).click();
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
