import { MID_STREAM, expect, test } from "./fixtures";

// The fake model quotes the password rule and nothing on the pool: the source check keeps the answer and ends it
// with its own note naming the part it leaves (PART_NOT_COVERED, backend/graph/nodes/validate_sources.py).
const QUESTION = "How long must passwords be, and where is the nearest swimming pool?";
const NOTE = "This answer does not cover the rest of the question: “where is the nearest swimming pool?”";

test("the checks' closing note is set apart from the model's words, live and after a reload", async ({
  chat,
  page,
}) => {
  await chat.goto();
  await chat.ask(QUESTION);
  const live = chat.lastAnswer();
  // while the model's words stream, there is no note yet: it comes with the checks' replace/done. The state, the
  // words and the notes are read in one look: on a loaded machine the answer could end between two (CI once saw
  // the words, then found the note, the answer done by then).
  const whileStreaming = () =>
    live.root.evaluate((el) => {
      const words = el.querySelector(".answer > .markdown")?.textContent ?? "";
      const notes = el.querySelectorAll("aside.check-note[role=note]").length;
      return el.getAttribute("data-state") === "streaming" && words.length > 0 ? `${notes} notes` : "not streaming";
    });
  await expect.poll(whileStreaming, MID_STREAM).toBe("0 notes");
  await chat.waitForAnswerDone();
  await expect(live.checkNote).toHaveCount(1);
  await expect(live.checkNote).toContainText("Checked by Ragline");
  await expect(live.checkNote).toContainText(NOTE);
  await expect(live.text).toContainText("Passwords must be at least 14 characters long");
  await expect(live.text).not.toContainText("does not cover");
  await expect(live.citation("S1")).toBeVisible();
  await chat.screenshot("check-note");

  await page.reload();
  const reloaded = chat.lastAnswer();
  await expect(reloaded.root).toHaveAttribute("data-state", "history");
  await expect(reloaded.checkNote).toHaveCount(1);
  await expect(reloaded.checkNote).toContainText(NOTE);
  await expect(reloaded.text).not.toContainText("does not cover");
});
