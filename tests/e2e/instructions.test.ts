// Project instructions in the real window (issue 38): a workspace with AGENTS.md at its root and
// in src/, and the person's own AGENTS.md beside Flame's settings. The scripted model reads
// src/lib.rs and pushes a child; the child's requests start with the person's, the root's and
// src/'s instructions in that order, the context inspector names the three files and when they
// were read, and the Settings dialog has the switch that turns them off.

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { By, Key } from "selenium-webdriver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { FakeModel } from "./fake-model";
import { flame, status } from "./flame-cli";
import { keepScreenshot, textOf, withApp } from "./harness";

const model = new FakeModel({ pieces: ["Checked."] });

beforeAll(() => model.start());
afterAll(() => model.stop());

describe("project instructions", () => {
  it("start the child's requests, and the inspector names the files read", async () => {
    model.answer(
      { pieces: ["Reading it."], tool: { name: "read_file", arguments: { path: "src/lib.rs" } } },
      {
        pieces: ["The library needs its own look."],
        tool: {
          name: "push_frame",
          arguments: { title: "Check the library", success_criteria: "lib.rs is checked" },
        },
      },
      { pieces: ["The library is fine."] },
    );
    const scratch = await mkdtemp(join(tmpdir(), "flame-e2e-instructions-"));
    const [home, work] = [join(scratch, "home"), join(scratch, "work")];
    await mkdir(home);
    await mkdir(join(work, "src"), { recursive: true });
    await writeFile(join(work, "AGENTS.md"), "ROOT-RULES: run the tests before you finish.\n");
    await writeFile(join(work, "src/AGENTS.md"), "SRC-RULES: keep functions short.\n");
    await writeFile(join(work, "src/lib.rs"), "pub fn answer() -> u32 { 42 }\n");
    flame(home, "tree", "new", "Review", "--criteria", "The code is reviewed", "--workspace", work);
    const personal = join(scratch, "config/flame/AGENTS.md");
    try {
      await withApp(
        "instructions",
        async (app) => {
          const box = await app.find("[data-testid=composer] textarea");
          await box.sendKeys("Review the library", Key.ENTER);
          await app.driver.wait(
            () => Promise.resolve(model.received.length === 3),
            15_000,
            "the child's answer",
          );
          const opening = model.received[2]?.opening ?? "";
          const at = (marker: string) => opening.indexOf(marker);
          expect(at("PERSONAL-RULES")).toBeGreaterThanOrEqual(0);
          expect(at("PERSONAL-RULES")).toBeLessThan(at("ROOT-RULES"));
          expect(at("ROOT-RULES")).toBeLessThan(at("SRC-RULES"));
          expect(at("SRC-RULES")).toBeLessThan(at("<stack-context id="));
          expect(model.received[0]?.opening).not.toContain("SRC-RULES");

          // The conversation is in the child now; its inspector names what its opening read.
          await app.driver.wait(
            async () => (await textOf(app, "[data-testid=messages]")).includes("is fine"),
            15_000,
            "the child's reply in the pane",
          );
          await (await app.find("[data-testid=inspector-toggle]")).click();
          await app.driver.wait(
            async () =>
              (await app.driver.findElements(By.css("[data-testid=instruction-file]"))).length ===
              3,
            15_000,
            "the inspector lists three files of instructions",
          );
          const files = await app.driver.findElements(By.css("[data-testid=instruction-file]"));
          const paths = await Promise.all(files.map((f) => f.getAttribute("data-path")));
          expect(paths).toEqual([personal, "AGENTS.md", "src/AGENTS.md"]);
          const said = await textOf(app, "[data-testid=context-instructions]");
          expect(said).toContain("read for opening 1,");
          expect(said).toContain("(yours, every workspace)");
          const child = status(app.home).focus;
          const stored = status(app.home).frames.find((f) => f.id === child);
          expect(stored?.title).toBe("Check the library");
          const section = await app.find("[data-testid=context-instructions]");
          await app.driver.executeScript("arguments[0].scrollIntoView({block: 'start'})", section);
          await keepScreenshot(app, "instructions-inspector");

          // The setting that turns them off.
          await (await app.find("[data-testid=settings-button]")).click();
          const toggle = await app.find("input[name=project_instructions]");
          expect(await toggle.isSelected()).toBe(true);
          await app.driver.executeScript("arguments[0].scrollIntoView({block: 'center'})", toggle);
          await keepScreenshot(app, "instructions-settings");
        },
        {
          prepareHome: () => Promise.resolve(home),
          env: async () => {
            const env = await model.settingsEnv(scratch);
            await writeFile(personal, "PERSONAL-RULES: answer briefly.\n");
            return env;
          },
        },
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
