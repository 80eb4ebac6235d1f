// An outline laid out for the flame graph: the layout (`layout.ts`) with what drawing reads by
// rank on every paint, made at once for most trees and in slices (`slices.ts`) for large ones.

import { useEffect, useMemo, useState } from "preact/hooks";

import type {
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { markOnce } from "../marks";
import { layoutInputOf, layoutSteps, type FlameLayout, type WeightMode } from "./layout";
import { statusCode } from "./render";
import { runInSlices } from "./slices";

/**
 * Trees up to this many frames are laid out while the view renders (100k frames take some tens
 * of milliseconds), so the tree is drawn in the first frame after it arrives; larger ones in
 * slices that give the window a turn every few milliseconds (`slices.ts`), the previous layout of
 * the same tree staying on screen meanwhile.
 */
export const SYNC_LAYOUT_FRAMES = 200_000;

/**
 * An outline laid out: the frames it was made from, with what drawing reads on every paint by
 * rank. Titles and the rest are read from the frames when needed, not copied per frame.
 */
export interface Laid {
  tree: string;
  frames: readonly FrameOutline[];
  layout: FlameLayout;
  status: Uint8Array;
  rolledBack: Uint8Array;
  /** Each frame's rank by its index in `frames`; -1 for a frame the root does not reach. */
  rankOfIndex: Int32Array;
  /** The rank of the frame with id `id`, if it is laid out. */
  rankOf: (id: string) => number | undefined;
}

function* layInSteps(outline: TreeOutline, mode: WeightMode): Generator<void, Laid, void> {
  const { frames } = outline;
  const input = layoutInputOf(frames, mode, Date.now(), outline.own_costs);
  yield;
  const layout = yield* layoutSteps(input);
  const status = new Uint8Array(layout.count);
  const rolledBack = new Uint8Array(layout.count);
  const rankOfIndex = new Int32Array(frames.length).fill(-1);
  for (let r = 0; r < layout.count; r++) {
    const i = layout.source[r]!;
    const frame = frames[i]!;
    status[r] = statusCode(frame.status);
    rolledBack[r] = frame.rolled_back_at !== null ? 1 : 0;
    rankOfIndex[i] = r;
  }
  if (layout.count > 0) markOnce("flame:laid-out");
  // Looking frames up by id is for the hooks, the breadcrumb and the tests: the map of a large
  // tree's ids is made the first time it is asked for, not before the tree is first drawn.
  let byId: Map<string, number> | null = null;
  const rankOf = (id: string) => {
    if (byId === null) {
      byId = new Map();
      for (let i = 0; i < rankOfIndex.length; i++) {
        if (rankOfIndex[i]! >= 0) byId.set(frames[i]!.id, rankOfIndex[i]!);
      }
    }
    return byId.get(id);
  };
  return {
    tree: outline.tree.id,
    frames,
    layout,
    status,
    rolledBack,
    rankOfIndex,
    rankOf,
  };
}

/** `outline` laid out for `mode`, at once. */
export function lay(outline: TreeOutline, mode: WeightMode): Laid {
  const steps = layInSteps(outline, mode);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/** What is drawn while a large tree's first layout is made: nothing. */
function nothingLaid(outline: TreeOutline): Laid {
  return lay({ ...outline, frames: [] }, "equal");
}

/**
 * `outline` laid out for `mode`: at once for a tree of up to `syncFrames` frames; for a larger
 * one, in slices, with the tree's previous layout (or nothing) until they are done.
 */
export function useLaid(
  outline: TreeOutline,
  mode: WeightMode,
  syncFrames: number = SYNC_LAYOUT_FRAMES,
): Laid {
  const sliced = outline.frames.length > syncFrames;
  const immediate = useMemo(() => (sliced ? null : lay(outline, mode)), [outline, mode, sliced]);
  const [background, setBackground] = useState<Laid | null>(null);
  useEffect(() => {
    if (!sliced) return;
    const run = runInSlices(layInSteps(outline, mode));
    void run.done.then(setBackground);
    return () => run.cancel();
  }, [outline, mode, sliced]);
  const empty = useMemo(() => nothingLaid(outline), [outline]);
  if (immediate !== null) return immediate;
  return background !== null && background.tree === outline.tree.id ? background : empty;
}
/** The frame laid out at `rank`; undefined for a rank below 0 (no frame). */
export function frameAt(laid: Laid, rank: number): FrameOutline | undefined {
  return rank < 0 ? undefined : laid.frames[laid.layout.source[rank]!];
}
