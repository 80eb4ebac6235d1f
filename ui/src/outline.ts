// The outline the window works with, made from the columns the `outline` command sends (see
// `crates/flame-api/src/outline.rs`: at 100k frames the columns are a quarter of the bytes of one
// object per frame, and the web view's IPC costs time per byte). Nothing is lost: every frame
// becomes the `FrameOutline` the backend read. Times come as offsets (a start from the outline's
// base, an end from its start, in seconds when every time is a whole second) and the frames with
// an own cost as steps from one to the next, which is how the columns stay small; they are made
// whole here. The frames' own costs, which only the flame graph's cost width reads, stay a column
// by index (`knownOwnCosts`) rather than an object keyed by 100k ids.

import type {
  FrameOutline_Serialize as FrameOutline,
  OutlineColumns_Serialize as OutlineColumns,
  OutlinePreview_Serialize as OutlinePreview,
  TreeOutline_Serialize as TreeOutline,
} from "./bindings";

// The parents of each frame list `expandOutline` made, as indexes into it: the flame graph's
// layout input needs them so, and finding 100k parents again by id would cost it a map of them.
const parentIndexes = new WeakMap<readonly FrameOutline[], Int32Array>();

/**
 * The parents of `frames` as indexes into it (-1 for the root; a frame's own index for a parent
 * not in the tree), when `expandOutline` made the list; else undefined.
 */
export function knownParentIndexes(frames: readonly FrameOutline[]): Int32Array | undefined {
  return parentIndexes.get(frames);
}

// The own cost of each frame of a list `expandOutline` made, in micro-dollars by index (0 for a
// frame with none): what the outline's `own_costs` would hold, without a property per frame.
const ownCostColumns = new WeakMap<readonly FrameOutline[], Float64Array>();

/**
 * The own costs of `frames` by index, when `expandOutline` made the list (which then leaves the
 * outline's `own_costs` out); else undefined.
 */
export function knownOwnCosts(frames: readonly FrameOutline[]): Float64Array | undefined {
  return ownCostColumns.get(frames);
}

/** `columns` as one `FrameOutline` per frame, in the columns' order. */
export function expandOutline(columns: OutlineColumns): TreeOutline {
  const n = columns.id.length;
  const { id, parent, title, status, statuses, time_base: base, time_unit: unit } = columns;
  const criteria = new Map(columns.success_criteria_compacted);
  const retries = new Map(columns.retry_of);
  const rolledBack = new Map(columns.rolled_back_at);
  const frames: FrameOutline[] = new Array<FrameOutline>(n);
  for (let i = 0; i < n; i++) {
    const p = parent[i]!;
    const afterBase = columns.started_after_base[i]!;
    const started = afterBase === null ? null : base + afterBase * unit;
    const afterStart = columns.ended_after_start[i]!;
    frames[i] = {
      id: id[i]!,
      parent: p < 0 ? null : id[p]!,
      position: columns.position[i]!,
      title: title[i]!,
      status: statuses[status[i]!]!,
      success_criteria_compacted: criteria.get(i) ?? null,
      retry_of: retries.get(i) ?? null,
      started_at: started,
      ended_at: afterStart === null ? null : (started ?? base) + afterStart * unit,
      message_count: columns.message_count[i]!,
      tokens: columns.tokens[i]!,
      rolled_back_at: rolledBack.get(i) ?? null,
    };
  }
  parentIndexes.set(frames, Int32Array.from(parent));
  const outline: TreeOutline = { tree: columns.tree, frames, seq: columns.seq };
  if (columns.own_costs.length > 0) {
    const costs = new Float64Array(n);
    let at = 0;
    columns.own_costs.forEach((micro, k) => {
      at += columns.own_cost_steps[k]!;
      costs[at] = micro;
    });
    ownCostColumns.set(frames, costs);
  }
  if (columns.focus_cost !== null) outline.focus_cost = columns.focus_cost;
  if (columns.budgets.length > 0) outline.budgets = columns.budgets;
  return outline;
}

/** The width modes a preview can be laid out by: those whose weights add up over a subtree. */
export type FoldedMode = "tokens" | "messages" | "equal";

/** Whether a preview can be drawn by `mode` (see `OutlinePreview`'s folded weights). */
export function previewDrawsBy(mode: string): mode is FoldedMode {
  return mode === "tokens" || mode === "messages" || mode === "equal";
}

// What each frame of a preview `expandPreview` made carries of the subtrees under it that the
// preview leaves out, by index and mode (0 for a frame with nothing left out).
const foldedColumns = new WeakMap<readonly FrameOutline[], Record<FoldedMode, Float64Array>>();

/**
 * What the frames under each of `frames` that its preview leaves out weigh by `mode`, by index,
 * when `expandPreview` made the list; else undefined. The layout adds it to the frame's own
 * weight, so each frame of the preview is as wide as in the whole tree.
 */
export function knownFoldedWeights(
  frames: readonly FrameOutline[],
  mode: FoldedMode,
): Float64Array | undefined {
  return foldedColumns.get(frames)?.[mode];
}

/** A large tree's preview as the window holds it: its outline, and how many frames are coming. */
export interface PreviewOutline {
  outline: TreeOutline;
  wholeFrames: number;
}

/**
 * The top of a large tree (`OutlinePreview`) as the outline the flame graph draws until the
 * whole outline comes: its frames as `expandOutline` makes them, with the weights of what it
 * leaves out kept beside them (`knownFoldedWeights`).
 */
export function expandPreview(preview: OutlinePreview): PreviewOutline {
  const outline = expandOutline(preview.columns);
  const n = outline.frames.length;
  const columns = {
    tokens: new Float64Array(n),
    messages: new Float64Array(n),
    equal: new Float64Array(n),
  };
  const { index, frames, tokens, messages } = preview.folded;
  index.forEach((i, k) => {
    columns.tokens[i] = tokens[k]!;
    columns.messages[i] = messages[k]!;
    columns.equal[i] = frames[k]!;
  });
  foldedColumns.set(outline.frames, columns);
  return { outline, wholeFrames: preview.whole_frames };
}
