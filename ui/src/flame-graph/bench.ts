// The flame graph's benchmark, run inside the real window (tests/bench drives it through
// WebDriver). It builds a synthetic tree of N frames in the page, lays it out, and times paint
// passes over a scripted pan and zoom on a canvas the size of the graph pane.

import { layoutTree, type LayoutInput } from "./layout";
import { paint, type Scene, type Viewport } from "./render";

export interface BenchResult {
  frames: number;
  layoutMs: number;
  paints: number;
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
  /** Rectangles and merged marks drawn, on average, per paint. */
  drawnPerPaint: number;
}

/**
 * A call-stack-shaped tree: each new frame is a child of the previous one or of one of its
 * ancestors, so depth varies up to `maxDepth`. Weights follow a long tail, with some zeros.
 */
export function syntheticTree(count: number, seed = 1, maxDepth = 48): LayoutInput {
  let state = seed >>> 0 || 1;
  const random = () => {
    // xorshift32: deterministic, so every run draws the same tree.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  const parent = new Int32Array(count);
  const position = new Float64Array(count);
  const ownWeight = new Float64Array(count);
  const childCount = new Int32Array(count);
  const stack: number[] = [];
  parent[0] = -1;
  ownWeight[0] = 100;
  stack.push(0);
  for (let i = 1; i < count; i++) {
    // Return from a few frames (a geometric number), but never from the root.
    while (stack.length > 1 && (random() < 0.45 || stack.length >= maxDepth)) stack.pop();
    const p = stack[stack.length - 1]!;
    parent[i] = p;
    position[i] = childCount[p]!++;
    ownWeight[i] = random() < 0.1 ? 0 : Math.floor(Math.exp(random() * 9));
    stack.push(i);
  }
  return { count, parent, position, ownWeight, combine: "sum" };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

/** The scripted viewports: zoom in towards a point, pan across, zoom back out. */
function script(steps: number, width: number, height: number): Viewport[] {
  const views: Viewport[] = [];
  const third = Math.max(1, Math.floor(steps / 3));
  const focus = 0.37;
  for (let k = 0; k < third; k++) {
    const span = Math.pow(1e-4, k / third);
    views.push({
      x0: focus - span * focus,
      x1: focus + span * (1 - focus),
      scrollTop: 0,
      width,
      height,
    });
  }
  const span = 1e-3;
  for (let k = 0; k < third; k++) {
    const x0 = focus - 0.05 + (0.1 * k) / third;
    views.push({ x0, x1: x0 + span * 40, scrollTop: (k % 4) * 22, width, height });
  }
  for (let k = third; k > 0; k--) {
    const s = Math.pow(1e-4, k / third);
    views.push({
      x0: Math.max(0, 0.5 - s / 2),
      x1: Math.min(1, 0.5 + s / 2),
      scrollTop: 0,
      width,
      height,
    });
  }
  return views;
}

/** Times `steps` paints of a synthetic `count`-frame tree in a `width`×`height` canvas. */
export function runBench(count: number, steps: number, width: number, height: number): BenchResult {
  const input = syntheticTree(count);
  const t0 = performance.now();
  const layout = layoutTree(input);
  const layoutMs = performance.now() - t0;

  const dpr = window.devicePixelRatio || 1;
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  canvas.style.position = "fixed";
  canvas.style.left = "0";
  canvas.style.top = "0";
  document.body.append(canvas);
  const ctx = canvas.getContext("2d");
  if (ctx === null) throw new Error("no 2D context");
  const scene: Scene = {
    layout,
    status: new Uint8Array(layout.count).map((_, r) => r % 6),
    titleOf: (rank) => `frame ${rank} of the synthetic tree`,
    // Every tenth frame rolled back, so the benchmark pays for the mark too.
    rolledBack: new Uint8Array(layout.count).map((_, r) => (r % 10 === 0 ? 1 : 0)),
    focus: Math.floor(layout.count / 2),
    active: -1,
    hover: -1,
    drop: null,
  };
  // One untimed paint first: it compiles the paint code and creates the hatch pattern, which a
  // window does once, not on every frame.
  paint(ctx, scene, { x0: 0, x1: 1, scrollTop: 0, width, height }, dpr);
  const times: number[] = [];
  let drawn = 0;
  for (const view of script(steps, width, height)) {
    const start = performance.now();
    const stats = paint(ctx, scene, view, dpr);
    // Reading a pixel back waits for the drawing to finish, so the time covers rasterising,
    // not only issuing the calls.
    ctx.getImageData(0, 0, 1, 1);
    times.push(performance.now() - start);
    drawn += stats.rects + stats.merged;
  }
  canvas.remove();
  const sorted = [...times].sort((a, b) => a - b);
  return {
    frames: layout.count,
    layoutMs,
    paints: times.length,
    p50Ms: percentile(sorted, 0.5),
    p90Ms: percentile(sorted, 0.9),
    maxMs: sorted[sorted.length - 1] ?? 0,
    drawnPerPaint: drawn / Math.max(1, times.length),
  };
}
