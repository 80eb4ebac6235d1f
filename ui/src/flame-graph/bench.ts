// The flame graph's benchmark of a synthetic tree, run inside the real window (tests/bench drives
// it through WebDriver). It builds a tree of N frames in the page, lays it out in slices the way
// the view does for a large tree while a timer measures how long the window went without a turn,
// and times paint passes over a scripted pan and zoom on a canvas the size of the graph pane.
// (Trees read from the store are measured through the view itself: `FlameGraphHook`.)
//
// Only the bench build of the UI has this module (`main.tsx`, `vite build --mode bench`).

import type { Answer } from "../backend";
import type { OutlineColumns_Serialize as OutlineColumns } from "../bindings";
import { expandOutline } from "../outline";
import { layoutInputOf, layoutSteps, layoutTree, type LayoutInput } from "./layout";
import { graphContext, paint, type Scene, type Viewport } from "./render";
import { runInSlices } from "./slices";

export interface BenchResult {
  frames: number;
  /** From the start of the layout to its end, the turns given to the window included. */
  layoutMs: number;
  /** The longest the window went without a turn while the layout ran. */
  longestBlockMs: number;
  /** The layout's own work: its slices, the longest, and all together. */
  slices: number;
  longestSliceMs: number;
  busyMs: number;
  /** The same layout made at once, without turns. */
  layoutAtOnceMs: number;
  paints: number;
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
  /** Each paint's time, in the script's order. */
  times: number[];
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

/**
 * Lays `input` out in slices, as the view does a large tree, while a timer asks for a turn over
 * and over: the longest wait between its turns is how long the window could not answer.
 */
async function layOutWatched(input: LayoutInput) {
  let longestBlockMs = 0;
  let last = performance.now();
  let watching = true;
  const watch = () => {
    const now = performance.now();
    longestBlockMs = Math.max(longestBlockMs, now - last);
    last = now;
    if (watching) setTimeout(watch, 0);
  };
  setTimeout(watch, 0);
  const t0 = performance.now();
  const run = runInSlices(layoutSteps(input));
  const layout = await run.done;
  const layoutMs = performance.now() - t0;
  watching = false;
  watch();
  const t1 = performance.now();
  layoutTree(input);
  const layoutAtOnceMs = performance.now() - t1;
  const slices = run.slices();
  return {
    layout,
    layoutMs,
    longestBlockMs,
    slices: slices.count,
    longestSliceMs: slices.longestMs,
    busyMs: slices.totalMs,
    layoutAtOnceMs,
  };
}

/** Times `steps` paints of a synthetic `count`-frame tree in a `width`×`height` canvas. */
export async function runBench(
  count: number,
  steps: number,
  width: number,
  height: number,
): Promise<BenchResult> {
  const { layout, ...timed } = await layOutWatched(syntheticTree(count));

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
  const ctx = graphContext(canvas);
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
    ...timed,
    paints: times.length,
    p50Ms: percentile(sorted, 0.5),
    p90Ms: percentile(sorted, 0.9),
    maxMs: sorted[sorted.length - 1] ?? 0,
    times,
    drawnPerPaint: drawn / Math.max(1, times.length),
  };
}

/** Where the time goes when the window loads a tree, in milliseconds. */
export interface OutlineLoad {
  frames: number;
  /** The JSON the `outline` command answers with. */
  bytes: number;
  /** The command, from the call to its parsed answer: the store, the IPC and the parse. */
  commandMs: number;
  /** Making the columns into one object per frame (`expandOutline`). */
  expandMs: number;
  /** The layout's input from the objects (`layoutInputOf`). */
  inputMs: number;
  /** The layout, at once. */
  layoutMs: number;
}

/** Reads the current tree's outline through `read` (the `outline` command) and times each part. */
export async function timeOutlineLoad(
  read: () => Promise<Answer<OutlineColumns>>,
): Promise<OutlineLoad> {
  const t0 = performance.now();
  const answer = await read();
  const t1 = performance.now();
  if (answer.status === "error") throw new Error(answer.error.message);
  const outline = expandOutline(answer.data);
  const t2 = performance.now();
  const input = layoutInputOf(outline.frames, "tokens", Date.now(), outline.own_costs);
  const t3 = performance.now();
  layoutTree(input);
  const t4 = performance.now();
  return {
    frames: outline.frames.length,
    bytes: JSON.stringify(answer.data).length,
    commandMs: t1 - t0,
    expandMs: t2 - t1,
    inputMs: t3 - t2,
    layoutMs: t4 - t3,
  };
}

declare global {
  interface Window {
    __flameBench?: typeof runBench;
    __flameOutlineBench?: () => Promise<OutlineLoad>;
  }
}

/** Puts the benchmark's entry points on `window`, where tests/bench calls them through WebDriver. */
export function installBenchHooks(read: () => Promise<Answer<OutlineColumns>>): void {
  window.__flameBench = runBench;
  window.__flameOutlineBench = () => timeOutlineLoad(read);
}
