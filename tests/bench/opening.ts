// How long the window takes to open: from the moment its process started (read from /proc) to
// the end of the first paint that drew a tree's frames (the page records
// `performance.timeOrigin + performance.now()` then; both are the system's wall clock), with the
// page's marks of the opening (outline asked and received, laid out, first paint) on stderr. Used
// by flame-graph.bench.ts (app.open_new, app.open_100k) and app.bench.ts (their ratio in one run).

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

/** Waits until the graph has painted the tree's frames; returns when that paint ended. */
export async function firstFramesPainted(driver: WebDriver): Promise<number> {
  return driver.wait<number>(
    async () =>
      (await driver.executeScript<number | null>(
        "return window.__flameGraph ? window.__flameGraph.firstFramesPaintedAt() : null",
      )) ?? false,
    120_000,
    "the flame graph never drew the tree",
  );
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
 * How long `app` took from its process's start to its first paint of a tree's frames, in
 * milliseconds; the page's marks of the opening go to stderr under `label`.
 */
export async function timeOpening(app: App, label: string): Promise<number> {
  await app.driver.manage().setTimeouts({ script: 120_000 });
  const paintedAt = await firstFramesPainted(app.driver);
  const pids = processesOf(APP_BINARY, `FLAME_HOME=${app.home}`);
  const pid = pids[pids.length - 1];
  if (pid === undefined) throw new Error(`no ${APP_BINARY} runs on ${app.home}`);
  const spawnedAt = startedAt(pid);
  const took = paintedAt - spawnedAt;
  process.stderr.write(
    `${label}: ${took.toFixed(0)} ms; ${await openingMarks(app.driver, spawnedAt)}\n`,
  );
  return took;
}
