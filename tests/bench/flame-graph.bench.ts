// The flame graph's benchmarks in the real WebKitGTK window of the release build, under Xvfb:
//
// - app.open_100k: the app opened on a data directory holding a 100k-frame tree (tests/bench/
//   fixture.ts: a generated export imported by `flame import`), from the moment its process
//   started (read from /proc) to the end of the first paint that drew the tree's frames (the page
//   records `performance.timeOrigin + performance.now()` then; both are the system's wall clock):
//   on this tree, the paint of its preview (its top levels). The window loads the tree as it
//   always does, through the `outline_preview` and `outline` commands. The median of OPENINGS
//   launches is printed, and app.open_100k_whole, to the first paint of the whole tree; the
//   page's marks (preview received, outline asked and received, laid out, first paint, whole
//   tree painted) are written to stderr for each.
// - ui.flame_graph_100k_*: paint times in that window while WebDriver zooms in with the keyboard,
//   pans with pointer drags and zooms back out: real input through the view's own handlers. Each
//   paint is timed in the view with a pixel read back, so the time covers rasterising. With them,
//   ui.outline_100k_size, the outline command's JSON, and on stderr where loading the tree goes.
// - app.open_new: the same on a new data directory (the first start's sample tree), for what the
//   app and WebKit take to start at all on this machine.
// - ui.flame_graph_1m_*: a synthetic 1M-frame tree built inside the page (not read through the
//   store: importing a million frames takes most of an hour, and their outline would be some
//   100 MB), laid out in slices as the view lays out large trees, with the longest time the window
//   went without a turn meanwhile, then painted over a scripted pan and zoom.
//
// Prints `BENCH <name> <value> <unit>` lines on stdout. Run by `make bench`.

import { Origin, type WebDriver, type WebElement } from "selenium-webdriver";
import { describe, it } from "vitest";

import { APP_BINARY, withApp } from "../e2e/harness";
import { scaleFixture } from "./fixture";
import { framesPainted, median, percentile, timeOpening, type Opening } from "./opening";

// What `window.__flameBench` returns: `BenchResult` of ui/src/flame-graph/bench.ts, which only the
// bench build of the UI holds (`make bench` embeds it in the release build), restated
// because this project type-checks for Node, without the DOM that module needs.
interface BenchResult {
  frames: number;
  layoutMs: number;
  longestBlockMs: number;
  slices: number;
  longestSliceMs: number;
  busyMs: number;
  layoutAtOnceMs: number;
  paints: number;
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
  times: number[];
  drawnPerPaint: number;
}

// What `window.__flameOutlineBench` returns: `OutlineLoad` of ui/src/flame-graph/bench.ts.
interface OutlineLoad {
  frames: number;
  bytes: number;
  commandMs: number;
  expandMs: number;
  inputMs: number;
  layoutMs: number;
}

/** Launches measured for app.open_100k. */
const OPENINGS = 3;

function line(name: string, value: number, unit: string) {
  process.stdout.write(`BENCH ${name} ${value.toFixed(1)} ${unit}\n`);
}

/**
 * Fails plainly when the window is not the bench build of the UI: only that build has
 * `window.__flameBench` and `window.__flameOutlineBench` (`make bench` builds it).
 */
async function requireBenchHooks(driver: WebDriver) {
  const found = await driver.executeScript<boolean>(
    "return typeof window.__flameBench === 'function' && typeof window.__flameOutlineBench === 'function'",
  );
  if (!found)
    throw new Error(
      `${APP_BINARY} has no benchmark hooks: it embeds the product UI, not the bench build (make bench builds it)`,
    );
}

/** Waits until the window has drawn a frame since the last input. */
async function nextFrame(driver: WebDriver) {
  await driver.executeAsyncScript(
    "const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done()));",
  );
}

/** Presses `key` on the focused graph `times` times, a frame apart. */
async function press(driver: WebDriver, graph: WebElement, key: string, times: number) {
  for (let k = 0; k < times; k++) {
    await graph.sendKeys(key);
    await nextFrame(driver);
  }
}

/**
 * Drags across the canvas from `from` by `by` (viewport pixels) in `steps` moves, a frame apart.
 * A drag that starts on a frame other than a planned one pans the view (one on a planned frame
 * would move it: the drags stay in the top rows, far above the fixture's few planned frames).
 */
async function drag(
  driver: WebDriver,
  from: { x: number; y: number },
  by: { x: number; y: number },
  steps: number,
) {
  await driver
    .actions({ async: true })
    .move({ ...from, origin: Origin.VIEWPORT })
    .press()
    .perform();
  for (let k = 1; k <= steps; k++) {
    const at = {
      x: Math.round(from.x + (by.x * k) / steps),
      y: Math.round(from.y + (by.y * k) / steps),
    };
    await driver
      .actions({ async: true })
      .move({ ...at, origin: Origin.VIEWPORT })
      .perform();
    await nextFrame(driver);
  }
  await driver.actions({ async: true }).release().perform();
}

/**
 * The scripted pan and zoom over the real view, through its own handlers: zoom in with `+` (each
 * press halves the span), pan with pointer drags sideways and down and back, zoom out with `-`.
 * (WebDriver's wheel actions do not reach this window's page.) Returns each paint's time.
 */
async function panAndZoom(driver: WebDriver, canvas: WebElement, graph: WebElement) {
  const box = await canvas.getRect();
  const at = { x: Math.round(box.x + box.width / 2), y: Math.round(box.y + 3 * 22 + 11) };
  await driver.executeScript("window.__flameGraph.timePaints(true)");
  await press(driver, graph, "+", 6);
  for (let k = 0; k < 4; k++) await drag(driver, at, { x: -240, y: 0 }, 12);
  await press(driver, graph, "+", 8);
  for (let k = 0; k < 4; k++) await drag(driver, at, { x: 240, y: 0 }, 12);
  await drag(driver, { x: at.x, y: at.y + 120 }, { x: 0, y: -110 }, 10);
  await drag(driver, at, { x: 0, y: 110 }, 10);
  await press(driver, graph, "-", 14);
  for (let k = 0; k < 2; k++) await drag(driver, at, { x: 300, y: 0 }, 12);
  return driver.executeScript<number[]>("return window.__flameGraph.timePaints(false)");
}

describe("flame graph benchmark", () => {
  it("opens a new data directory, for comparison", async () => {
    const opened: Opening[] = [];
    for (let k = 0; k < OPENINGS; k++) {
      await withApp("flame graph benchmark new", async (app) => {
        opened.push(await timeOpening(app, `open new ${k + 1}`));
      });
    }
    line("app.open_new", median(opened.map((o) => o.first)), "ms");
  });

  it("opens a 100k-frame data directory and paints it while panning and zooming", async () => {
    const fixture = await scaleFixture();
    const opened: Opening[] = [];
    for (let k = 0; k < OPENINGS; k++) {
      await withApp(
        "flame graph benchmark 100k",
        async (app) => {
          opened.push(await timeOpening(app, `open 100k ${k + 1}`));
          if (k < OPENINGS - 1) return;
          await requireBenchHooks(app.driver);
          const laidOut = await app.driver.executeScript<number>(
            "return window.__flameGraph.laidOut()",
          );
          const canvas = await app.find("[data-testid=flame-canvas]");
          const graph = await app.find("[data-testid=flame-graph]");
          const load = await app.driver.executeAsyncScript<OutlineLoad>(
            `const done = arguments[arguments.length - 1];
             window.__flameOutlineBench().then(done, (e) => done(String(e)));`,
          );
          line("ui.outline_100k_size", load.bytes / 1e6, "MB");
          process.stderr.write(
            `100k outline: ${load.frames} frames, ${(load.bytes / 1e6).toFixed(1)} MB; command ${load.commandMs.toFixed(0)} ms, objects ${load.expandMs.toFixed(0)} ms, layout input ${load.inputMs.toFixed(0)} ms, layout ${load.layoutMs.toFixed(0)} ms\n`,
          );
          const times = await panAndZoom(app.driver, canvas, graph);
          const sorted = [...times].sort((a, b) => a - b);
          line("ui.flame_graph_100k_p50", percentile(sorted, 0.5), "ms");
          line("ui.flame_graph_100k_p90", percentile(sorted, 0.9), "ms");
          line("ui.flame_graph_100k_max", sorted[sorted.length - 1] ?? 0, "ms");
          process.stderr.write(
            `100k: ${laidOut} frames laid out, ${times.length} paints: ${times.map((t) => t.toFixed(0)).join(" ")}\n`,
          );
        },
        { prepareHome: () => Promise.resolve(fixture.home) },
      );
    }
    line("app.open_100k", median(opened.map((o) => o.first)), "ms");
    line("app.open_100k_whole", median(opened.map((o) => o.whole)), "ms");
  });

  it("lays out and paints a synthetic 1M-frame tree", async () => {
    await withApp("flame graph benchmark 1m", async (app) => {
      await app.driver.manage().setTimeouts({ script: 600_000 });
      // The window first settles on its new data directory (the sample tree drawn, its focused
      // conversation rendered), so the layout is measured on its own.
      await framesPainted(app.driver, "whole");
      await requireBenchHooks(app.driver);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await nextFrame(app.driver);
      const result = await app.driver.executeAsyncScript<BenchResult>(
        `const done = arguments[arguments.length - 1];
         window.__flameBench(arguments[0], 180, 760, 700).then(done, (e) => done(String(e)));`,
        1_000_000,
      );
      line("ui.flame_graph_1m_layout", result.layoutMs, "ms");
      line("ui.flame_graph_1m_layout_longest_block", result.longestBlockMs, "ms");
      line("ui.flame_graph_1m_p50", result.p50Ms, "ms");
      line("ui.flame_graph_1m_p90", result.p90Ms, "ms");
      line("ui.flame_graph_1m_max", result.maxMs, "ms");
      process.stderr.write(
        `1m: ${result.frames} frames, laid out in ${result.slices} slices in ${result.layoutMs.toFixed(0)} ms (busy ${result.busyMs.toFixed(0)} ms, longest slice ${result.longestSliceMs.toFixed(0)} ms), at once in ${result.layoutAtOnceMs.toFixed(0)} ms; ${result.paints} paints, ${result.drawnPerPaint.toFixed(0)} marks drawn per paint: ${result.times.map((t) => t.toFixed(0)).join(" ")}\n`,
      );
    });
  });
});
