// What frames cost, in the real window: a shared Claude Code session imported with `flame`, its
// replies priced by model; Width: Cost sizes the graph's frames by it, and the tooltip and the
// frame header say it. The costs the window draws are checked against `flame --json status`.

import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { By, Origin } from "selenium-webdriver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { formatUsd } from "../../ui/src/cost-text";
import { flame } from "./flame-cli";
import { keepScreenshot, rectOf, textOf, withApp } from "./harness";

const SHARED = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/claude-code");
const SESSION = join(SHARED, "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl");

interface CostSummary {
  micro_usd: number;
  completeness: string;
}

/** A frame's cost as the window words it, for a frame whose every token is priced. */
function phrase(frame: CostedFrame): string {
  const subtree = formatUsd(frame.cost.subtree.micro_usd);
  if (frame.cost.own.completeness === "none") return `nothing here; ${subtree} with its subtree`;
  const own = formatUsd(frame.cost.own.micro_usd);
  return frame.cost.own.micro_usd === frame.cost.subtree.micro_usd
    ? own
    : `${own}; ${subtree} with its subtree`;
}

interface CostedFrame {
  id: string;
  parent: string | null;
  title: string;
  cost: { own: CostSummary; subtree: CostSummary };
}

// The window and `flame` read the same (empty) settings: built-in prices only.
let config = "";
const savedConfig = process.env["XDG_CONFIG_HOME"];
beforeAll(async () => {
  config = join(tmpdir(), `flame-e2e-cost-${process.pid}`);
  await mkdir(config, { recursive: true });
  process.env["XDG_CONFIG_HOME"] = config;
});
afterAll(async () => {
  if (savedConfig === undefined) delete process.env["XDG_CONFIG_HOME"];
  else process.env["XDG_CONFIG_HOME"] = savedConfig;
  await rm(config, { recursive: true, force: true });
});

describe("frame costs in the window", () => {
  it("sizes frames by cost with Width: Cost, and says what each cost", async () => {
    await withApp(
      "width cost",
      async (app) => {
        const frames = (flame(app.home, "status") as { frames: CostedFrame[] }).frames;
        const root = frames.find((f) => f.parent === null)!;
        expect(root.cost.subtree.completeness).toBe("complete");
        expect(root.cost.subtree.micro_usd).toBeGreaterThan(0);
        // The root's two dearest children, both well above the minimum share a frame keeps.
        const [dear, next] = frames
          .filter((f) => f.parent === root.id)
          .sort((a, b) => b.cost.subtree.micro_usd - a.cost.subtree.micro_usd) as [
          CostedFrame,
          CostedFrame,
        ];
        expect(next.cost.subtree.micro_usd).toBeGreaterThan(0.1 * root.cost.subtree.micro_usd);

        await app.find("[data-testid=flame-canvas]");
        const mode = await app.find("[data-testid=weight-mode]");
        await (await mode.findElement(By.css("option[value=cost]"))).click();
        // Widths follow the subtrees' costs.
        const ratio = next.cost.subtree.micro_usd / dear.cost.subtree.micro_usd;
        await app.driver.wait(
          async () => {
            const [a, b] = [await rectOf(app.driver, dear.id), await rectOf(app.driver, next.id)];
            return Math.abs(b.width / a.width - ratio) < 0.02;
          },
          5_000,
          `${next.title} is ${ratio.toFixed(3)} of ${dear.title}'s width`,
        );

        // The tooltip of the dearest child says what it and its subtree cost.
        const rect = await rectOf(app.driver, dear.id);
        const at = {
          x: Math.round(rect.x + rect.width / 2),
          y: Math.round(rect.y + rect.height / 2),
        };
        await app.driver
          .actions({ async: true })
          .move({ ...at, origin: Origin.VIEWPORT })
          .perform();
        const said = await (await app.find("[data-testid=tooltip-cost]")).getText();
        expect(said).toBe(phrase(dear));
        await keepScreenshot(app, "width-cost");

        // Focused, its header says the same.
        await app.driver.actions({ async: true }).click().perform();
        await app.driver.wait(
          async () => (await textOf(app, "[data-testid=frame-cost]")) === `Cost: ${said}`,
          5_000,
          `the header's cost line says ${said}`,
        );
      },
      {
        prepareHome: async (scratch) => {
          const home = join(scratch, "home");
          await mkdir(home);
          flame(home, "import", SESSION);
          return home;
        },
        env: async () => Promise.resolve({ XDG_CONFIG_HOME: config }),
      },
    );
  });

  it("prices a model at the person's own price once it is saved in the settings", async () => {
    await withApp(
      "own price",
      async (app) => {
        const focused = () => {
          const read = flame(app.home, "status") as { focus: string; frames: CostedFrame[] };
          return read.frames.find((f) => f.id === read.focus)!;
        };
        const before = focused();
        await app.driver.wait(
          async () => (await textOf(app, "[data-testid=frame-cost]")) === `Cost: ${phrase(before)}`,
          5_000,
          "the header's cost at the built-in prices",
        );
        await (await app.find("[data-testid=settings-button]")).click();
        await (await app.find("[data-testid=settings-prices] summary")).click();
        // Claude Opus 4.6, every rate doubled.
        const row = await app.find('[data-testid=price-row][data-model="claude-opus-4-6"]');
        for (const [rate, dollars] of [
          ["input", "10"],
          ["output", "50"],
          ["cache_read", "1"],
          ["cache_write", "12.5"],
          ["cache_write_long", "20"],
        ] as const) {
          const input = await row.findElement(By.css(`input[name=price_${rate}]`));
          await app.driver.executeScript("arguments[0].scrollIntoView({block: 'center'})", input);
          await input.clear();
          await input.sendKeys(dollars);
        }
        await keepScreenshot(app, "settings-prices");
        const save = await app.find("[data-testid=settings-dialog] button[type=submit]");
        await app.driver.executeScript("arguments[0].scrollIntoView({block: 'center'})", save);
        await save.click();
        // `flame` reads the saved prices too; the window shows what it says.
        await app.driver.wait(
          () => Promise.resolve(focused().cost.own.micro_usd !== before.cost.own.micro_usd),
          5_000,
          "the saved price is the one `flame` uses",
        );
        const after = focused();
        expect(Math.abs(after.cost.own.micro_usd - 2 * before.cost.own.micro_usd)).toBeLessThan(
          0.01 * before.cost.own.micro_usd + 2,
        );
        await app.driver.wait(
          async () => (await textOf(app, "[data-testid=frame-cost]")) === `Cost: ${phrase(after)}`,
          5_000,
          `the header's cost at the saved prices, ${phrase(after)}`,
        );
      },
      {
        prepareHome: async (scratch) => {
          const home = join(scratch, "home");
          await mkdir(home);
          flame(home, "import", SESSION);
          return home;
        },
        env: async () => Promise.resolve({ XDG_CONFIG_HOME: config }),
      },
    );
  });

  it("marks a spent budget under the frame header, and lifts the mark when it is raised there", async () => {
    await withApp(
      "budget spent",
      async (app) => {
        const line = "[data-testid=frame-budget]";
        await app.driver.wait(
          async () => (await (await app.find(line)).getAttribute("data-exceeded")) === "true",
          5_000,
          "the root's budget shown as spent",
        );
        const spent = await textOf(app, line);
        expect(spent).toContain("/ $1.00");
        expect(spent).toContain("spent; raise it or pop the frame");
        await keepScreenshot(app, "budget-spent");

        await (await app.find("[data-testid=budget-edit]")).click();
        const dollars = await app.find(`${line} input[name=usd]`);
        await dollars.clear();
        await dollars.sendKeys("1000");
        await (await app.find("[data-testid=budget-save]")).click();
        await app.driver.wait(
          async () => (await (await app.find(line)).getAttribute("data-exceeded")) === "false",
          5_000,
          "the raised budget no longer spent",
        );
        expect(await textOf(app, line)).toContain("/ $1000.00");
        // `flame` reads the budget the window saved.
        const root = (flame(app.home, "status") as { frames: CostedFrame[] }).frames.find(
          (f) => f.parent === null,
        )!;
        const shown = flame(app.home, "budget", root.id) as { budget: { micro_usd: number } };
        expect(shown.budget.micro_usd).toBe(1_000_000_000);
      },
      {
        prepareHome: async (scratch) => {
          const home = join(scratch, "home");
          await mkdir(home);
          flame(home, "import", SESSION);
          const root = (flame(home, "status") as { frames: CostedFrame[] }).frames.find(
            (f) => f.parent === null,
          )!;
          flame(home, "focus", root.id);
          flame(home, "budget", root.id, "--usd", "1");
          return home;
        },
        env: async () => Promise.resolve({ XDG_CONFIG_HOME: config }),
      },
    );
  });
});
