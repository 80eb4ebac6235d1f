// The flame graph's batched canvas renderer.
//
// It never walks every frame: for each row on screen it binary-searches the layout's per-depth
// index for the first frame in view and stops at the first frame past the right edge. Frames
// narrower than a pixel are not drawn one by one: everything that starts in the same pixel
// column is merged into one mark and the walk jumps past it (level of detail), so a row costs
// at most one step per pixel whatever the number of frames. Rectangles are collected per fill
// style and painted with one path each.

import type { Status } from "../bindings";
import { STATUS_STYLE } from "../status-style";
import { BUDGET_FILLS } from "./budget-use";
import type { FlameLayout } from "./layout";

/** The height of one row (one depth) in CSS pixels, the gap below each rectangle included. */
export const ROW_HEIGHT = 22;
const GAP = 1;
/** Rectangles narrower than this many CSS pixels are merged per pixel column. */
const LOD_PX = 1;
/** Labels are drawn only in rectangles at least this wide. */
const LABEL_MIN_PX = 28;
const LABEL_PAD = 5;
export const LABEL_FONT =
  "12px system-ui, -apple-system, 'Segoe UI', Cantarell, 'Noto Sans', sans-serif";

const MERGED_FILL = "#6a6478";
/** The band along the top of a rolled-back frame, and the sign before its label. */
export const ROLLED_BACK_FILL = "#f5b642";
const ROLLED_BACK_BAND = 3;
export const ROLLED_BACK_SIGN = "↶ ";
const STATUS_CODES: readonly Status[] = [
  "planned",
  "in_progress",
  "completed",
  "failed",
  "blocked",
  "invalidated",
];

export function statusCode(status: Status): number {
  return STATUS_CODES.indexOf(status);
}

/** What part of the layout is on screen, and how big the screen is (CSS pixels). */
export interface Viewport {
  /** The layout x at the left and right edges of the canvas. */
  x0: number;
  x1: number;
  /** How far the rows are scrolled down, in CSS pixels. */
  scrollTop: number;
  width: number;
  height: number;
}

/** Where a dragged frame would land, drawn as a marker. */
export interface DropMarker {
  rank: number;
  place: "before" | "after" | "into";
}

/** Everything one paint needs besides the viewport. */
export interface Scene {
  layout: FlameLayout;
  /** Status code (see `statusCode`) by rank. */
  status: Uint8Array;
  titleOf: (rank: number) => string;
  /** 1 by rank for a frame whose changes were rolled back: drawn with a band and a sign. */
  rolledBack: Uint8Array;
  /**
   * When the graph is coloured by budget used, the level by rank of the most spent budget on
   * each frame's path (`budgetUseByRank`), laid over its status as `BUDGET_FILLS`.
   */
  budgetUse?: Uint8Array | null;
  focus: number;
  active: number;
  hover: number;
  drop: DropMarker | null;
  /** Whether the layout is of a preview of the tree's top levels, not of the whole tree. */
  preview?: boolean;
}

export interface PaintStats {
  rects: number;
  merged: number;
  labels: number;
  /** Rolled-back frames drawn with their mark. */
  rolledBack: number;
}

/** Draws the outline of a rectangle as four filled edges `t` pixels thick, inside it. */
function edges(
  ctx: CanvasRenderingContext2D,
  x: number,
  y: number,
  w: number,
  h: number,
  t: number,
) {
  ctx.fillRect(x, y, w, t);
  ctx.fillRect(x, y + h - t, w, t);
  ctx.fillRect(x, y + t, t, h - 2 * t);
  ctx.fillRect(x + w - t, y + t, t, h - 2 * t);
}

/** Converts between layout x and canvas x for one viewport. */
export function toScreen(view: Viewport, x: number): number {
  return ((x - view.x0) * view.width) / (view.x1 - view.x0);
}

/** The index in `row` of the first frame whose right edge is past `x`. */
export function firstEndingAfter(
  layout: FlameLayout,
  row: Int32Array,
  x: number,
  from = 0,
): number {
  let lo = from;
  let hi = row.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (layout.x1[row[mid]!]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function firstStartingAt(layout: FlameLayout, row: Int32Array, x: number, from: number): number {
  let lo = from;
  let hi = row.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (layout.x0[row[mid]!]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The frame under a point of the canvas (CSS pixels), or -1. */
export function hitTest(layout: FlameLayout, view: Viewport, cssX: number, cssY: number): number {
  const depth = Math.floor((cssY + view.scrollTop) / ROW_HEIGHT);
  const row = layout.rows[depth];
  if (row === undefined || cssY < 0 || cssY > view.height) return -1;
  if ((cssY + view.scrollTop) % ROW_HEIGHT > ROW_HEIGHT - GAP) return -1;
  const x = view.x0 + (cssX * (view.x1 - view.x0)) / view.width;
  const k = firstEndingAfter(layout, row, x);
  const rank = row[k];
  return rank !== undefined && layout.x0[rank]! <= x ? rank : -1;
}

let hatch: CanvasPattern | null = null;

// Planned frames are drawn hollow with diagonal hatching, so they read as "not started" even
// where the legend is out of sight.
function hatchPattern(ctx: CanvasRenderingContext2D, dpr: number): CanvasPattern | string {
  if (hatch !== null) return hatch;
  const size = Math.round(8 * dpr);
  const tile = document.createElement("canvas");
  tile.width = size;
  tile.height = size;
  const t = tile.getContext("2d");
  if (t === null) return "rgba(140,127,214,0.2)";
  t.fillStyle = "rgba(140,127,214,0.14)";
  t.fillRect(0, 0, size, size);
  t.strokeStyle = "rgba(140,127,214,0.45)";
  t.lineWidth = Math.max(1, dpr);
  t.beginPath();
  t.moveTo(0, size);
  t.lineTo(size, 0);
  t.stroke();
  hatch = ctx.createPattern(tile, "repeat");
  if (hatch !== null) hatch.setTransform(new DOMMatrix().scale(1 / dpr));
  return hatch ?? "rgba(140,127,214,0.2)";
}

/**
 * The graph canvas's 2D context. It is asked for as one read back often, which keeps it in
 * memory rather than on the GPU: WebKitGTK otherwise chooses per canvas, and under software GL
 * (Mesa's llvmpipe, as under Xvfb) an accelerated canvas spent 2–4 ms per paint finishing its
 * drawing, where the canvas in memory draws a paint of the 100k tree in about 1 ms. The choice is
 * the page's, not WebKit's heuristics, so every window draws the same way.
 */
export function graphContext(canvas: HTMLCanvasElement): CanvasRenderingContext2D | null {
  return canvas.getContext("2d", { willReadFrequently: true });
}

const widthCache = new Map<string, number>();

function textWidth(ctx: CanvasRenderingContext2D, text: string): number {
  let w = widthCache.get(text);
  if (w === undefined) {
    w = ctx.measureText(text).width;
    if (widthCache.size > 50_000) widthCache.clear();
    widthCache.set(text, w);
  }
  return w;
}

/**
 * `text` cut with an ellipsis to fit in `room` pixels, or "" if not even one letter fits. The
 * cut is first estimated from the text's average letter width, then corrected, so a label
 * costs a few measurements whatever its length.
 */
export function fitLabel(measure: (s: string) => number, text: string, room: number): string {
  const full = measure(text);
  if (full <= room) return text;
  const ellipsis = measure("…");
  if (room < ellipsis + measure(text.slice(0, 1))) return "";
  const average = full / text.length;
  let keep = Math.max(1, Math.floor((room - ellipsis) / average));
  for (;;) {
    const width = measure(text.slice(0, keep)) + ellipsis;
    if (width <= room || keep === 1) break;
    keep = Math.max(1, Math.min(keep - 1, Math.floor(keep - (width - room) / average)));
  }
  return text.slice(0, keep).trimEnd() + "…";
}

/**
 * Paints `scene` in `view` on a canvas whose backing store is `dpr` times its CSS size.
 * Returns what was drawn, for the benchmark.
 */
export function paint(
  ctx: CanvasRenderingContext2D,
  scene: Scene,
  view: Viewport,
  dpr: number,
): PaintStats {
  const { layout } = scene;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, view.width, view.height);
  const stats: PaintStats = { rects: 0, merged: 0, labels: 0, rolledBack: 0 };
  if (layout.count === 0 || view.width <= 0) return stats;

  const scale = view.width / (view.x1 - view.x0);
  const batches: number[][] = STATUS_CODES.map(() => []);
  const merged: number[] = [];
  const labels: number[] = [];
  const rolledBack: number[] = [];
  const budgeted: number[][] = BUDGET_FILLS.map(() => []);
  const budgetUse = scene.budgetUse ?? null;
  const firstRow = Math.max(0, Math.floor(view.scrollTop / ROW_HEIGHT));
  const lastRow = Math.min(
    layout.rows.length - 1,
    Math.floor((view.scrollTop + view.height) / ROW_HEIGHT),
  );
  const h = ROW_HEIGHT - GAP;

  for (let d = firstRow; d <= lastRow; d++) {
    const row = layout.rows[d]!;
    const y = d * ROW_HEIGHT - view.scrollTop;
    let k = firstEndingAfter(layout, row, view.x0);
    let runStart = -1;
    let runEnd = -1;
    while (k < row.length) {
      const r = row[k]!;
      const x0 = layout.x0[r]!;
      if (x0 >= view.x1) break;
      const sx0 = (x0 - view.x0) * scale;
      const sx1 = (layout.x1[r]! - view.x0) * scale;
      if (sx1 - sx0 < LOD_PX) {
        // Merge this pixel column's frames into one mark and skip to the next column.
        const column = Math.floor(sx0);
        if (column === runEnd) runEnd = column + 1;
        else {
          if (runStart >= 0) merged.push(runStart, y, runEnd - runStart);
          runStart = column;
          runEnd = column + 1;
        }
        k = firstStartingAt(layout, row, view.x0 + (column + 1) / scale, k + 1);
        continue;
      }
      const left = Math.max(sx0, -2);
      const right = Math.min(sx1, view.width + 2);
      batches[scene.status[r]!]!.push(left, y, right - left, r);
      if (scene.rolledBack[r] === 1) rolledBack.push(left, y, right - left);
      if (budgetUse !== null && budgetUse[r]! > 0)
        budgeted[budgetUse[r]!]!.push(left, y, right - left);
      if (right - left >= LABEL_MIN_PX) labels.push(r, left, right - left, y);
      k++;
    }
    if (runStart >= 0) merged.push(runStart, y, runEnd - runStart);
  }

  // Solid statuses first, then the hollow planned ones, then the merged marks. Each batch sets
  // its style once and draws with fillRect: in WebKitGTK that is several times faster than one
  // path of many rectangles, whose filling and stroking go through the general path rasteriser.
  for (let s = 1; s < STATUS_CODES.length; s++) {
    const batch = batches[s]!;
    if (batch.length === 0) continue;
    ctx.fillStyle = STATUS_STYLE[STATUS_CODES[s]!].fill;
    for (let i = 0; i < batch.length; i += 4) {
      ctx.fillRect(batch[i]!, batch[i + 1]!, Math.max(batch[i + 2]! - GAP, 0.5), h);
    }
    stats.rects += batch.length / 4;
  }
  const planned = batches[0]!;
  if (planned.length > 0) {
    ctx.fillStyle = hatchPattern(ctx, dpr);
    for (let i = 0; i < planned.length; i += 4) {
      ctx.fillRect(planned[i]!, planned[i + 1]!, Math.max(planned[i + 2]! - GAP, 0.5), h);
    }
    ctx.fillStyle = STATUS_STYLE.planned.fill;
    for (let i = 0; i < planned.length; i += 4) {
      edges(ctx, planned[i]!, planned[i + 1]!, Math.max(planned[i + 2]! - GAP, 1), h, 1);
    }
    stats.rects += planned.length / 4;
  }
  if (merged.length > 0) {
    ctx.fillStyle = MERGED_FILL;
    for (let i = 0; i < merged.length; i += 3)
      ctx.fillRect(merged[i]!, merged[i + 1]!, merged[i + 2]!, h);
    stats.merged = merged.length / 3;
  }

  if (rolledBack.length > 0) {
    ctx.fillStyle = ROLLED_BACK_FILL;
    for (let i = 0; i < rolledBack.length; i += 3) {
      ctx.fillRect(
        rolledBack[i]!,
        rolledBack[i + 1]!,
        Math.max(rolledBack[i + 2]! - GAP, 0.5),
        ROLLED_BACK_BAND,
      );
    }
    stats.rolledBack = rolledBack.length / 3;
  }

  for (let level = 1; level < budgeted.length; level++) {
    const batch = budgeted[level]!;
    if (batch.length === 0) continue;
    ctx.fillStyle = BUDGET_FILLS[level]!;
    for (let i = 0; i < batch.length; i += 3)
      ctx.fillRect(batch[i]!, batch[i + 1]!, Math.max(batch[i + 2]! - GAP, 0.5), h);
  }

  paintLabels(ctx, scene, labels, view);
  stats.labels = labels.length / 4;
  paintHighlights(ctx, scene, view);
  return stats;
}

function paintLabels(
  ctx: CanvasRenderingContext2D,
  scene: Scene,
  labels: number[],
  view: Viewport,
) {
  ctx.font = LABEL_FONT;
  ctx.textBaseline = "middle";
  // Whole titles are measured once and remembered; the cut versions change with every zoom
  // step, so they are measured afresh rather than filling the cache.
  const measure = (s: string) => textWidth(ctx, s);
  const measureCut = (s: string) => ctx.measureText(s).width;
  let fill = "";
  for (let i = 0; i < labels.length; i += 4) {
    const r = labels[i]!;
    // A rectangle that starts left of the canvas keeps its label in sight.
    const left = Math.max(labels[i + 1]!, 0);
    const room = Math.min(labels[i + 1]! + labels[i + 2]!, view.width) - left - 2 * LABEL_PAD;
    const title = (scene.rolledBack[r] === 1 ? ROLLED_BACK_SIGN : "") + scene.titleOf(r);
    const text = measure(title) <= room ? title : fitLabel(measureCut, title, room);
    if (text === "") continue;
    const color = STATUS_STYLE[STATUS_CODES[scene.status[r]!]!].text;
    if (color !== fill) {
      ctx.fillStyle = color;
      fill = color;
    }
    ctx.fillText(text, left + LABEL_PAD, labels[i + 3]! + (ROW_HEIGHT - GAP) / 2 + 0.5);
  }
}

/** The rectangle of `rank` in canvas CSS pixels, or null if it is out of the rows on screen. */
export function rectOnCanvas(layout: FlameLayout, view: Viewport, rank: number) {
  if (rank < 0 || rank >= layout.count) return null;
  const x = toScreen(view, layout.x0[rank]!);
  const width = toScreen(view, layout.x1[rank]!) - x;
  return {
    x,
    y: layout.depth[rank]! * ROW_HEIGHT - view.scrollTop,
    width,
    height: ROW_HEIGHT - GAP,
  };
}

function paintHighlights(ctx: CanvasRenderingContext2D, scene: Scene, view: Viewport) {
  const { layout } = scene;
  const outline = (rank: number, color: string, width: number, dash: number[] = []) => {
    const rect = rectOnCanvas(layout, view, rank);
    if (rect === null || rect.y + rect.height < 0 || rect.y > view.height) return;
    const left = Math.max(rect.x, -width);
    const right = Math.min(rect.x + rect.width, view.width + width);
    ctx.setLineDash(dash);
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.strokeRect(
      left + width / 2,
      rect.y + width / 2,
      Math.max(right - left - GAP - width, 1),
      rect.height - width,
    );
    ctx.setLineDash([]);
  };
  // The focused frame's ancestors are marked along their bottom edge, so the path from the
  // root to the focus reads as one line of emphasis.
  for (let r = layout.parent[scene.focus] ?? -1; r >= 0; r = layout.parent[r]!) {
    const rect = rectOnCanvas(layout, view, r);
    if (rect === null) continue;
    const left = Math.max(rect.x, 0);
    const right = Math.min(rect.x + rect.width, view.width);
    ctx.fillStyle = "rgba(255,255,255,0.85)";
    ctx.fillRect(left, rect.y + rect.height - 3, Math.max(right - left - GAP, 1), 3);
  }
  if (scene.hover >= 0) {
    const rect = rectOnCanvas(layout, view, scene.hover);
    if (rect !== null) {
      ctx.fillStyle = "rgba(255,255,255,0.16)";
      ctx.fillRect(
        Math.max(rect.x, 0),
        rect.y,
        Math.min(rect.width, view.width) - GAP,
        rect.height,
      );
    }
  }
  if (scene.focus >= 0) outline(scene.focus, "#ffffff", 2);
  if (scene.active >= 0 && scene.active !== scene.focus)
    outline(scene.active, "#ffffff", 1, [3, 2]);
  if (scene.drop !== null) {
    const rect = rectOnCanvas(layout, view, scene.drop.rank);
    if (rect === null) return;
    ctx.fillStyle = "#7dd3fc";
    if (scene.drop.place === "into") {
      outline(scene.drop.rank, "#7dd3fc", 2, [5, 3]);
    } else {
      const x = scene.drop.place === "before" ? rect.x : rect.x + rect.width - GAP;
      ctx.fillRect(x - 1.5, rect.y - 2, 3, rect.height + 4);
    }
  }
}
