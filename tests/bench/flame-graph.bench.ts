// The flame graph's benchmark in the real WebKitGTK window: builds synthetic trees of 100k and
// 1M frames inside the page and times paint passes over a scripted pan and zoom. Prints
// `BENCH <name> <value> <unit>` lines on stdout. Run under Xvfb by `make bench`.

import { describe, it } from "vitest";

import { withApp } from "../e2e/harness";

// What `window.__flameBench` returns: `BenchResult` of ui/src/flame-graph/bench.ts, restated
// because this project type-checks for Node, without the DOM that module needs.
interface BenchResult {
  frames: number;
  layoutMs: number;
  paints: number;
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
  drawnPerPaint: number;
}

function line(name: string, value: number, unit: string) {
  process.stdout.write(`BENCH ${name} ${value.toFixed(1)} ${unit}\n`);
}

describe("flame graph benchmark", () => {
  it("paints 100k and 1M frames while panning and zooming", async () => {
    await withApp("flame graph benchmark", async (app) => {
      await app.find("[data-testid=graph-pane]");
      await app.driver.manage().setTimeouts({ script: 600_000 });
      for (const [label, count] of [
        ["100k", 100_000],
        ["1m", 1_000_000],
      ] as const) {
        const result = await app.driver.executeScript<BenchResult>(
          "return window.__flameBench(arguments[0], 180, 760, 700)",
          count,
        );
        line(`ui.flame_graph_${label}_p50`, result.p50Ms, "ms");
        line(`ui.flame_graph_${label}_p90`, result.p90Ms, "ms");
        line(`ui.flame_graph_${label}_max`, result.maxMs, "ms");
        line(`ui.flame_graph_${label}_layout`, result.layoutMs, "ms");
        process.stderr.write(
          `${label}: ${result.frames} frames, ${result.paints} paints, ${result.drawnPerPaint.toFixed(0)} marks drawn per paint\n`,
        );
      }
    });
  });
});
