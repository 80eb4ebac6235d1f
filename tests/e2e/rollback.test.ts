// Checkpoints and rollback in the real window: in a tree whose workspace is a git repository, the
// scripted model changes two files in a pushed frame (changes run without asking), and the frame
// is popped as failed from the command line. In the window the frame is focused with a click on
// the canvas, its Changes list both files and show the diff, and Roll back puts both files back
// byte for byte; the store says the frame was rolled back, and the graph marks it.

import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { By, Key, Origin } from "selenium-webdriver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { FakeModel } from "./fake-model";
import { CLI_BINARY, flame, frameId, status } from "./flame-cli";
import { rectOf, withApp, textOf, keepScreenshot } from "./harness";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const model = new FakeModel({ pieces: ["Done."] });

beforeAll(() => model.start());
afterAll(() => model.stop());

/** Runs git in `folder`, with an identity of its own so no global configuration is needed. */
function git(folder: string, ...args: string[]) {
  execFileSync(
    "git",
    ["-c", "user.name=Flame test", "-c", "user.email=test@example.invalid", ...args],
    { cwd: folder, stdio: "ignore" },
  );
}

const GREET = "def greet(name):\n    return 'helo, ' + name\n";
const README = "# Greeter\n\nSays hello.\n";

interface DiffJson {
  files: { path: string }[];
  patch: string;
  rolled_back_at: number | null;
}

describe("checkpoints and rollback", () => {
  it("shows a failed frame's changes and rolls them back from the window", async () => {
    model.answer(
      {
        pieces: ["Fixing the greeting."],
        tool: {
          name: "edit_file",
          arguments: { path: "greet.py", old_string: "'helo, '", new_string: "'hello, '" },
        },
      },
      {
        pieces: ["Documenting it."],
        tool: {
          name: "write_file",
          arguments: { path: "README.md", content: "# Greeter\n\nSays hello, politely.\n" },
        },
      },
      { pieces: ["Both files are changed."] },
    );
    const scratch = await mkdtemp(join(tmpdir(), "flame-e2e-rollback-"));
    const [home, work] = [join(scratch, "home"), join(scratch, "work")];
    await mkdir(home);
    await mkdir(work);
    await writeFile(join(work, "greet.py"), GREET);
    await writeFile(join(work, "README.md"), README);
    git(work, "init", "-q");
    git(work, "add", ".");
    git(work, "commit", "-q", "-m", "first");
    const root = (
      flame(
        home,
        "tree",
        "new",
        "Polish the greeter",
        "--criteria",
        "It greets",
        "--workspace",
        work,
      ) as { root: string }
    ).root;
    const child = frameId(home, "push", "Fix the greeting", "--criteria", "It says hello");
    try {
      await withApp(
        "rollback",
        async (app) => {
          const box = await app.find("[data-testid=composer] textarea");
          await box.sendKeys("Fix the greeting and say so in the README", Key.ENTER);
          await app.driver.wait(
            () => Promise.resolve(model.received.length === 3),
            20_000,
            "the model's three answers",
          );
          await app.driver.wait(
            async () => (await readFile(join(work, "README.md"), "utf8")).includes("politely"),
            10_000,
            "both edits on disk",
          );
          expect(await readFile(join(work, "greet.py"), "utf8")).toContain("'hello, '");
          // Let the answer finish before the frame is popped from another process.
          await app.driver.wait(
            async () => (await textOf(app, "[data-testid=messages]")).includes("Both files"),
            10_000,
            "the last answer shown",
          );
          flame(home, "pop", child, "--status", "failed", "--reason", "x");
          await app.driver.wait(
            async () =>
              (await app.driver.findElements(By.css(`[data-testid=focused-frame]`))).length === 1 &&
              (await (
                await app.find("[data-testid=focused-frame]")
              ).getAttribute("data-frame-id")) === root,
            10_000,
            "the window followed the pop to the root",
          );

          // The command line shows the same changes.
          const plain = execFileSync(CLI_BINARY, ["--home", home, "diff", child], {
            encoding: "utf8",
          });
          expect(plain).toContain("greet.py");
          expect(plain).toContain("README.md");

          // Focus the failed frame with a real click on its rectangle.
          const rect = await rectOf(app.driver, child);
          await app.driver
            .actions({ async: true })
            .move({
              x: Math.round(rect.x + rect.width / 2),
              y: Math.round(rect.y + rect.height / 2),
              origin: Origin.VIEWPORT,
            })
            .click()
            .perform();
          await app.driver.wait(
            () => Promise.resolve(status(home).focus === child),
            10_000,
            "the click focused the failed frame",
          );
          await app.driver.wait(
            async () =>
              (await (
                await app.find("[data-testid=focused-frame]")
              ).getAttribute("data-frame-id")) === child,
            10_000,
            "the chat follows the failed frame",
          );
          await (await app.find("[data-testid=changes-toggle]")).click();
          await app.driver.wait(
            async () =>
              (await app.driver.findElements(By.css("[data-testid=changed-file]"))).length === 2,
            10_000,
            "both changed files listed",
          );
          const listed = await Promise.all(
            (await app.driver.findElements(By.css("[data-testid=changed-file]"))).map((row) =>
              row.getAttribute("data-path"),
            ),
          );
          expect(listed.sort()).toEqual(["README.md", "greet.py"]);
          const diff = await textOf(app, "[data-testid=changes-diff]");
          expect(diff).toContain("-    return 'helo, ' + name");
          expect(diff).toContain("+    return 'hello, ' + name");
          expect(diff).toContain("+Says hello, politely.");
          expect(await textOf(app, "[data-testid=rollback]")).toContain("Roll back");
          const shot = await keepScreenshot(app, "rollback-changes-view");
          if (process.env["FLAME_DOCS_SCREENSHOT"] !== undefined) {
            await writeFile(join(REPO, "docs/changes-view.png"), shot, "base64");
          }

          await (await app.find("[data-testid=rollback-button]")).click();
          await app.find("[data-testid=rollback-outcome]");
          expect(await textOf(app, "[data-testid=rollback-restored]")).toContain("greet.py");
          expect(await textOf(app, "[data-testid=rollback-restored]")).toContain("README.md");
          expect(await readFile(join(work, "greet.py"), "utf8")).toBe(GREET);
          expect(await readFile(join(work, "README.md"), "utf8")).toBe(README);

          // The store says so, and the graph marks the frame.
          const after = flame(home, "diff", child) as DiffJson;
          expect(after.rolled_back_at).not.toBeNull();
          await app.driver.wait(
            async () =>
              (await app.driver.executeScript<boolean | null>(
                "return window.__flameGraph.rolledBackOf(arguments[0])",
                child,
              )) === true,
            10_000,
            "the graph marks the rolled-back frame",
          );
          const item = await app.driver.findElement(
            By.css(`[role=treeitem][data-frame-id="${child}"]`),
          );
          expect(await item.getAttribute("textContent")).toContain("rolled back");
          expect(
            await app.driver.executeScript<boolean | null>(
              "return window.__flameGraph.rolledBackOf(arguments[0])",
              root,
            ),
          ).toBe(false);
          await app.driver.wait(
            async () => (await textOf(app, "[data-testid=frame-rolled-back]")).includes("Rolled"),
            10_000,
            "the header says the frame was rolled back",
          );
          await keepScreenshot(app, "rollback-after");
        },
        {
          prepareHome: () => Promise.resolve(home),
          env: () =>
            model.settingsEnv(scratch, [], {
              approval: { read: "auto", change: "auto", run: "ask" },
            }),
        },
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
