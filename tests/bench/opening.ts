// How long the window takes to open: from the moment its process started (read from /proc) to
// the end of the first paint that drew a tree's frames (the page records
// `performance.timeOrigin + performance.now()` then; both are the system's wall clock), and to
// the end of the first paint of the whole tree (later on a large tree, whose preview of its top
// levels is drawn first), with the page's marks of the opening (preview received, outline asked
// and received, laid out, first paint, whole tree painted) on stderr. Used by
// flame-graph.bench.ts (app.open_new, app.open_100k) and app.bench.ts (their ratios in one run).

import type { WebDriver } from "selenium-webdriver";

import { APP_BINARY, type App } from "../e2e/harness";
import { processesOf, startedAt } from "./process-start";

/** The value at `p` (0 to 1) of `sorted`. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/**
 * Waits until the graph has painted frames (`first`: perhaps a large tree's preview) or the whole
 * tree's (`whole`); returns when that paint ended.
 */
export async function framesPainted(driver: WebDriver, which: "first" | "whole"): Promise<number> {
  const hook = which === "first" ? "firstFramesPaintedAt" : "wholeTreePaintedAt";
  return driver.wait<number>(
    async () =>
      (await driver.executeScript<number | null>(
        `return window.__flameGraph ? window.__flameGraph.${hook}() : null`,
      )) ?? false,
    120_000,
    "the flame graph never drew the tree",
  );
}

/** When the window's first paint of frames and of the whole tree ended, in ms after its start. */
export interface Opening {
  first: number;
  whole: number;
}

/** The page's marks of the opening, in milliseconds after the process started. */
async function openingMarks(driver: WebDriver, spawnedAt: number): Promise<string> {
  const marks = await driver.executeScript<{ name: string; at: number }[]>(
    `return performance.getEntriesByType("mark")
       .filter((m) => m.name.startsWith("flame:"))
       .map((m) => ({ name: m.name, at: performance.timeOrigin + m.startTime }));`,
  );
  const origin = await driver.executeScript<number>("return performance.timeOrigin");
  return [
    `page loaded at ${(origin - spawnedAt).toFixed(0)}`,
    ...marks.map((m) => `${m.name.slice("flame:".length)} at ${(m.at - spawnedAt).toFixed(0)}`),
  ].join(", ");
}

/**
 * How long `app` took from its process's start to its first paint of a tree's frames and of the
 * whole tree, in milliseconds; the page's marks of the opening go to stderr under `label`.
 */
export async function timeOpening(app: App, label: string): Promise<Opening> {
  await app.driver.manage().setTimeouts({ script: 120_000 });
  const wholeAt = await framesPainted(app.driver, "whole");
  const paintedAt = await framesPainted(app.driver, "first");
  const pids = processesOf(APP_BINARY, `FLAME_HOME=${app.home}`);
  const pid = pids[pids.length - 1];
  if (pid === undefined) throw new Error(`no ${APP_BINARY} runs on ${app.home}`);
  const spawnedAt = startedAt(pid);
  const took = { first: paintedAt - spawnedAt, whole: wholeAt - spawnedAt };
  process.stderr.write(
    `${label}: ${took.first.toFixed(0)} ms, whole tree ${took.whole.toFixed(0)} ms; ${await openingMarks(app.driver, spawnedAt)}\n`,
  );
  return took;
}
