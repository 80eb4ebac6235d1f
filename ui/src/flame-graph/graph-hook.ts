// The flame graph's hook on `window` for the end-to-end tests and the benchmark (tests/e2e,
// tests/bench): where a frame is drawn, whether it carries the rolled-back mark, and what the
// paints took. Both drive the real window through WebDriver, which reads the canvas no other way.

import { useEffect, type MutableRef } from "preact/hooks";

import { markOnce } from "../marks";
import type { Laid } from "./laid";
import { rectOnCanvas, type Viewport } from "./render";

/** Hooks for end-to-end tests and the benchmark: where a frame is drawn, in viewport CSS pixels. */
export interface FlameGraphHook {
  rectOf(id: string): { x: number; y: number; width: number; height: number } | null;
  /** Whether the frame is drawn with the rolled-back mark; null when it is not in the tree. */
  rolledBackOf(id: string): boolean | null;
  view(): Viewport;
  /** How many frames are laid out and drawn (0 while a large tree's layout is being made). */
  laidOut(): number;
  /**
   * When the first paint that drew frames ended, in milliseconds since the epoch
   * (`performance.timeOrigin + performance.now()`), or null before it.
   */
  firstFramesPaintedAt(): number | null;
  /**
   * When the first paint of the whole tree's frames ended, as `firstFramesPaintedAt`: later than
   * it when a large tree's preview was drawn first.
   */
  wholeTreePaintedAt(): number | null;
  /**
   * Starts timing every paint (each waits for its pixels, so the time covers rasterising), or
   * stops and returns the times, in milliseconds, since it was started.
   */
  timePaints(on: boolean): number[];
}

declare global {
  interface Window {
    __flameGraph?: FlameGraphHook;
  }
}

/**
 * What the benchmark (tests/bench) reads of the paints: when the first paint that drew frames
 * ended, and the first that drew the whole tree's, and, while `timing` is on, how long each paint
 * took with its rasterising.
 */
const paintRecord: {
  firstFramesAt: number | null;
  wholeTreeAt: number | null;
  timing: boolean;
  times: number[];
} = {
  firstFramesAt: null,
  wholeTreeAt: null,
  timing: false,
  times: [],
};

/**
 * Records a paint into `ctx` that started at `start` and drew `frames` frames, of the whole tree
 * or (`whole` false) of a preview of its top levels.
 */
export function recordPaint(
  ctx: CanvasRenderingContext2D,
  start: number,
  frames: number,
  whole: boolean,
) {
  if (paintRecord.timing) {
    // Reading a pixel back waits for the drawing to finish.
    ctx.getImageData(0, 0, 1, 1);
    paintRecord.times.push(performance.now() - start);
  }
  if (paintRecord.firstFramesAt === null && frames > 0) {
    markOnce("flame:first-frames-painted");
    paintRecord.firstFramesAt = performance.timeOrigin + performance.now();
  }
  if (paintRecord.wholeTreeAt === null && frames > 0 && whole) {
    markOnce("flame:whole-tree-painted");
    paintRecord.wholeTreeAt = performance.timeOrigin + performance.now();
  }
}

/** Puts the hook for `laid`, drawn on `canvas` through `view`, on `window`. */
export function useGraphHook(
  laid: Laid,
  canvas: MutableRef<HTMLCanvasElement | null>,
  view: MutableRef<Viewport>,
) {
  useEffect(() => {
    window.__flameGraph = {
      rectOf(id) {
        const rank = laid.rankOf(id);
        const c = canvas.current;
        if (rank === undefined || !c) return null;
        const rect = rectOnCanvas(laid.layout, view.current, rank);
        if (rect === null) return null;
        const box = c.getBoundingClientRect();
        const left = Math.max(rect.x, 0);
        const right = Math.min(rect.x + rect.width, view.current.width);
        return {
          x: box.left + left,
          y: box.top + rect.y,
          width: right - left,
          height: rect.height,
        };
      },
      rolledBackOf(id) {
        const rank = laid.rankOf(id);
        return rank === undefined ? null : laid.rolledBack[rank] === 1;
      },
      view: () => ({ ...view.current }),
      laidOut: () => laid.layout.count,
      firstFramesPaintedAt: () => paintRecord.firstFramesAt,
      wholeTreePaintedAt: () => paintRecord.wholeTreeAt,
      timePaints(on) {
        const times = paintRecord.times;
        paintRecord.timing = on;
        paintRecord.times = [];
        return times;
      },
    };
  }, [laid]);
}
