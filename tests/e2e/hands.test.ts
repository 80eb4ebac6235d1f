// The agent's hands in the real window: in a tree with a workspace folder the scripted model
// reads a file, proposes an edit (the approval shows its diff; accepted), runs a command (the
// approval shows it and says it runs in the sandbox; accepted) and pops. The file changed on
// disk, the frame's artifacts name it, the parent's next context names it, and the finished
// frame's tool cards show the read, the diff, the command's exit code and that it ran in the
// sandbox.

import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { By, Key } from "selenium-webdriver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { FakeModel } from "./fake-model";
import { flame, frameId, status } from "./flame-cli";
import { type App, withApp, textOf, keepScreenshot } from "./harness";

const model = new FakeModel({ pieces: ["Done."] });

beforeAll(() => model.start());
afterAll(() => model.stop());

/** Waits for the approval prompt of a workspace call of `kind` and returns it. */
async function approvalOf(app: App, kind: string) {
  await app.driver.wait(
    async () =>
      (await app.driver.findElements(By.css(`[data-testid=approval][data-tool-kind=${kind}]`)))
        .length === 1,
    15_000,
    `an approval prompt for a ${kind} call`,
  );
  return app.find(`[data-testid=approval][data-tool-kind=${kind}]`);
}

describe("the agent's hands", () => {
  it("reads, edits and runs with approval, pops, and the trail reaches the parent", async () => {
    model.answer(
      { pieces: ["Reading it."], tool: { name: "read_file", arguments: { path: "greet.py" } } },
      {
        pieces: ["Fixing the typo."],
        tool: {
          name: "edit_file",
          arguments: { path: "greet.py", old_string: "helo", new_string: "hello" },
        },
      },
      {
        pieces: ["Checking it."],
        tool: { name: "run_command", arguments: { command: "grep -c hello greet.py" } },
      },
      {
        pieces: ["Fixed."],
        tool: {
          name: "pop_frame",
          arguments: { status: "completed", results: "greet.py now prints hello" },
        },
      },
      { pieces: ["The greeting is fixed."] },
    );
    const scratch = await mkdtemp(join(tmpdir(), "flame-e2e-hands-"));
    const [home, work] = [join(scratch, "home"), join(scratch, "work")];
    await mkdir(home);
    await mkdir(work);
    await writeFile(join(work, "greet.py"), "print('helo')\n");
    const root = (
      flame(
        home,
        "tree",
        "new",
        "Fix the site",
        "--criteria",
        "It greets",
        "--workspace",
        work,
      ) as {
        root: string;
      }
    ).root;
    const child = frameId(home, "push", "Fix the greeting", "--criteria", "greet.py says hello");
    try {
      await withApp(
        "hands",
        async (app) => {
          await app.find("[data-testid=workspace-path]");
          expect(await textOf(app, "[data-testid=workspace-path]")).toContain("work");
          const box = await app.find("[data-testid=composer] textarea");
          await box.sendKeys("Fix the typo in greet.py", Key.ENTER);

          const edit = await approvalOf(app, "changing");
          const diff = await textOf(app, "[data-testid=approval-diff]");
          expect(diff).toContain("-print('helo')");
          expect(diff).toContain("+print('hello')");
          expect(await readFile(join(work, "greet.py"), "utf8")).toBe("print('helo')\n");
          await keepScreenshot(app, "hands-edit-approval");
          await (await edit.findElement(By.css("[data-testid=approval-allow]"))).click();

          const run = await approvalOf(app, "running");
          expect(await textOf(app, "[data-testid=approval-command]")).toContain(
            "grep -c hello greet.py",
          );
          expect(await textOf(app, "[data-testid=command-place]")).toContain("Runs in the sandbox");
          await keepScreenshot(app, "hands-run-approval");
          await (await run.findElement(By.css("[data-testid=approval-allow]"))).click();

          // The pop moves the conversation back to the root, which answers last.
          await app.driver.wait(
            () => Promise.resolve(status(home).focus === root),
            15_000,
            "the popped frame handed the conversation back",
          );
          expect(await readFile(join(work, "greet.py"), "utf8")).toBe("print('hello')\n");
          const popped = (
            status(home).frames as unknown as { id: string; status: string; artifacts: string[] }[]
          ).find((f) => f.id === child);
          expect(popped?.status).toBe("completed");
          expect(popped?.artifacts).toContain("greet.py");
          await app.driver.wait(
            () => Promise.resolve(model.received.length === 5),
            15_000,
            "the parent's answer",
          );
          // The parent's first call makes its opening, which holds the popped child's files.
          const parentContext = model.received[4]?.opening ?? "";
          expect(parentContext).toContain("greet.py");

          // The finished frame's own conversation shows its tool cards.
          flame(home, "focus", child);
          await app.driver.wait(
            async () =>
              (await app.driver.findElements(By.css("[data-testid=tool-card]"))).length >= 3,
            15_000,
            "the finished frame's tool cards",
          );
          expect(await textOf(app, "[data-testid=frame-files]")).toContain("1 file changed");
          expect(await textOf(app, "[data-testid=tool-card][data-kind=read]")).toContain(
            "greet.py",
          );
          expect(await textOf(app, "[data-testid=tool-card][data-kind=change]")).toContain(
            "+print('hello')",
          );
          const exit = await app.find("[data-testid=tool-exit]");
          expect(await exit.getAttribute("data-exit-code")).toBe("0");
          const command = await app.find("[data-testid=tool-card][data-kind=command]");
          expect(await textOf(app, "[data-testid=tool-card][data-kind=command]")).toContain(
            "Ran a command in the sandbox",
          );
          const place = await command.findElement(By.css("[data-testid=tool-place]"));
          expect(await place.getAttribute("data-place")).toBe("sandbox");
          await app.driver.executeScript("arguments[0].scrollIntoView()", command);
          await keepScreenshot(app, "hands-tool-cards");
        },
        {
          prepareHome: () => Promise.resolve(home),
          env: () => model.settingsEnv(scratch),
        },
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
