// The flame graph's pure layout: a tree of frames in, rectangles out, as column arrays.
//
// Nothing here knows about canvases, pixels or time of day: x runs from 0 to 1 across the root,
// y is a row number (the depth), and the result depends only on the input. The renderer and the
// view read these columns; the unit tests check them directly.

import type {
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { knownFoldedWeights, knownOwnCosts, knownParentIndexes, previewDrawsBy } from "../outline";

/** What a frame's width stands for. */
export type WeightMode = "tokens" | "equal" | "messages" | "time" | "cost";

export const WEIGHT_MODES: readonly WeightMode[] = ["tokens", "equal", "messages", "time", "cost"];

/**
 * A frame whose subtree weighs nothing (a new plan has no tokens) still gets at least this
 * share of its parent's width, so it can be seen, pointed at and dropped on.
 */
export const MIN_SHARE = 0.06;

/** The tree as columns: frame `i` has parent `parent[i]` (-1 for the root). */
export interface LayoutInput {
  readonly count: number;
  readonly parent: Int32Array;
  /** Order among siblings. */
  readonly position: Float64Array;
  /** The frame's own weight, before its children are added. */
  readonly ownWeight: Float64Array;
  /**
   * How a subtree's weight combines: "sum" adds the children to the frame's own weight (tokens,
   * messages, frames); "span" takes the larger of the frame's own weight and its children's sum,
   * since a frame's wall time already contains its children's.
   */
  readonly combine: "sum" | "span";
}

/**
 * The laid-out tree. Every array is indexed by *rank*, the frame's place in a depth-first walk
 * (parents before children, siblings in position order); `source[rank]` is its index in the
 * input. Frames not reachable from the root are left out.
 */
export interface FlameLayout {
  readonly count: number;
  readonly source: Int32Array;
  readonly depth: Int32Array;
  readonly x0: Float64Array;
  readonly x1: Float64Array;
  readonly parent: Int32Array;
  /** The first child's rank, or -1. */
  readonly firstChild: Int32Array;
  /** The next and previous sibling's rank, or -1. */
  readonly nextSibling: Int32Array;
  readonly prevSibling: Int32Array;
  /** One past the rank of the last frame in this frame's subtree. */
  readonly subtreeEnd: Int32Array;
  /**
   * The subtree's weight in the mode's own unit (tokens, frames, messages, milliseconds,
   * micro-dollars).
   */
  readonly weight: Float64Array;
  /** For each depth, the ranks at that depth in increasing x: the renderer's visible index. */
  readonly rows: readonly Int32Array[];
}

/**
 * How many frames (or children, or rows) a step of `layoutSteps` handles between two yields: small
 * enough that a step takes about a millisecond on a slow machine, large enough that the yields
 * cost nothing measurable.
 */
export const LAYOUT_STEP = 32_768;

/** Lays out `input` at once; the root is the first frame with no parent. */
export function layoutTree(input: LayoutInput): FlameLayout {
  const steps = layoutSteps(input);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * Lays out `input` step by step: the generator yields after each `step` units of work and
 * returns the layout, so a caller can give the event loop a turn between steps (the view does for
 * large trees). The result is `layoutTree`'s, whoever drives it. Every pass is linear in the
 * number of frames; the only sort is of siblings not already listed in position order.
 */
export function* layoutSteps(
  input: LayoutInput,
  step: number = LAYOUT_STEP,
): Generator<void, FlameLayout, void> {
  const n = input.count;
  const { parent, position, ownWeight } = input;

  // Children of each frame, as compressed rows sorted by position: count, prefix sums, fill.
  const childStart = new Int32Array(n + 1);
  let root = -1;
  for (let from = 0; from < n; from += step) {
    root = countChildren(parent, childStart, from, Math.min(n, from + step), root);
    yield;
  }
  for (let from = 1; from <= n; from += step) {
    prefixSums(childStart, from, Math.min(n + 1, from + step));
    yield;
  }
  const children = new Int32Array(Math.max(0, childStart[n] ?? 0));
  const fill = childStart.slice(0, Math.max(n, 1));
  for (let from = 0; from < n; from += step) {
    fillChildren(parent, fill, children, from, Math.min(n, from + step));
    yield;
  }
  for (let from = 0; from < n; from += step) {
    sortSiblings(position, childStart, children, from, Math.min(n, from + step));
    yield;
  }

  // Depth-first ranks, without recursion (a tree may be thousands of frames deep). The walk
  // also links each frame to its parent and siblings by rank, and counts the frames per depth.
  // Every column is written when its frame is ranked, so none needs filling first.
  // Allocating a column of a million frames takes milliseconds (fresh memory is zeroed), so
  // each is made in a step of its own.
  const int32s: Int32Array[] = [];
  for (let k = 0; k < 10; k++) {
    int32s.push(new Int32Array(n));
    yield;
  }
  const column = (k: number) => int32s[k]!;
  const [source, depth, parentRank] = [column(0), column(1), column(2)];
  const [firstChild, nextSibling, prevSibling] = [column(3), column(4), column(5)];
  const walk: Walk = {
    source,
    depth,
    parentRank,
    firstChild,
    nextSibling,
    prevSibling,
    lastChild: column(6),
    perDepth: column(7),
    stack: column(8),
    stackParent: column(9),
    top: 0,
    count: 0,
    maxDepth: -1,
  };
  if (root >= 0) {
    walk.stack[0] = root;
    walk.stackParent[0] = -1;
    walk.top = 1;
  }
  while (walk.top > 0) {
    walkDepthFirst(walk, childStart, children, step);
    yield;
  }
  const count = walk.count;

  // Subtree weights and extents, children before parents (reverse rank order).
  const weight = new Float64Array(count);
  yield;
  const childSum = new Float64Array(count);
  yield;
  const subtreeEnd = new Int32Array(count);
  const sum = input.combine === "sum";
  for (let to = count; to > 0; to -= step) {
    weigh(
      ownWeight,
      sum,
      source,
      parentRank,
      weight,
      childSum,
      subtreeEnd,
      Math.max(0, to - step),
      to,
    );
    yield;
  }

  // Horizontal extents, parents before children.
  const x0 = new Float64Array(count);
  yield;
  const x1 = new Float64Array(count);
  if (count > 0) x1[0] = 1;
  for (let from = 0; from < count; from += step) {
    place(firstChild, nextSibling, weight, childSum, x0, x1, from, Math.min(count, from + step));
    yield;
  }

  // The per-depth index: a depth-first walk meets each depth's frames from left to right.
  const rows = Array.from(
    walk.perDepth.subarray(0, walk.maxDepth + 1),
    (size) => new Int32Array(size),
  );
  const rowFill = new Int32Array(rows.length);
  for (let from = 0; from < count; from += step) {
    fillRows(depth, rows, rowFill, from, Math.min(count, from + step));
    yield;
  }

  const whole = count === n;
  return {
    count,
    source: whole ? source : source.slice(0, count),
    depth: whole ? depth : depth.slice(0, count),
    x0,
    x1,
    parent: whole ? parentRank : parentRank.slice(0, count),
    firstChild: whole ? firstChild : firstChild.slice(0, count),
    nextSibling: whole ? nextSibling : nextSibling.slice(0, count),
    prevSibling: whole ? prevSibling : prevSibling.slice(0, count),
    subtreeEnd,
    weight,
    rows,
  };
}

// The passes, each over a range so `layoutSteps` can stop between ranges. They are plain
// functions rather than loops in the generator's body, so the engine optimises them as such.

/** Adds to each count in `from..to` the ones before it (`from` at least 1). */
function prefixSums(counts: Int32Array, from: number, to: number) {
  for (let i = from; i < to; i++) counts[i] = counts[i]! + counts[i - 1]!;
}

function fillRows(
  depth: Int32Array,
  rows: Int32Array[],
  rowFill: Int32Array,
  from: number,
  to: number,
) {
  for (let r = from; r < to; r++) {
    const d = depth[r]!;
    rows[d]![rowFill[d]!++] = r;
  }
}

/** Counts frame `p`'s children into `counts[p + 1]`; returns the root (the first parentless frame). */
function countChildren(
  parent: Int32Array,
  counts: Int32Array,
  from: number,
  to: number,
  root: number,
): number {
  for (let i = from; i < to; i++) {
    const p = parent[i]!;
    if (p >= 0) counts[p + 1]!++;
    else if (root < 0) root = i;
  }
  return root;
}

function fillChildren(
  parent: Int32Array,
  fill: Int32Array,
  children: Int32Array,
  from: number,
  to: number,
) {
  for (let i = from; i < to; i++) {
    const p = parent[i]!;
    if (p >= 0) children[fill[p]!++] = i;
  }
}

/** Puts each frame's children in position order (ties by input order), unless they are. */
function sortSiblings(
  position: Float64Array,
  childStart: Int32Array,
  children: Int32Array,
  from: number,
  to: number,
) {
  for (let i = from; i < to; i++) {
    const start = childStart[i]!;
    const end = childStart[i + 1]!;
    let sorted = true;
    for (let c = start + 1; c < end && sorted; c++) {
      const a = children[c - 1]!;
      const b = children[c]!;
      // Filled in input order, so equal positions are already in input order.
      sorted = position[a]! <= position[b]!;
    }
    if (!sorted) {
      const order = Array.from(children.subarray(start, end)).sort(
        (a, b) => position[a]! - position[b]! || a - b,
      );
      children.set(order, start);
    }
  }
}

/** The depth-first walk's columns and its explicit stack, kept between steps. */
interface Walk {
  source: Int32Array;
  depth: Int32Array;
  parentRank: Int32Array;
  firstChild: Int32Array;
  nextSibling: Int32Array;
  prevSibling: Int32Array;
  /** The last child ranked so far, by the parent's rank. */
  lastChild: Int32Array;
  /** How many frames each depth has. */
  perDepth: Int32Array;
  /** Frames (input indexes) still to visit, with their parent's rank. */
  stack: Int32Array;
  stackParent: Int32Array;
  top: number;
  count: number;
  maxDepth: number;
}

/** Ranks up to `budget` frames of the walk. */
function walkDepthFirst(w: Walk, childStart: Int32Array, children: Int32Array, budget: number) {
  const { source, depth, parentRank, firstChild, nextSibling, prevSibling, lastChild } = w;
  const { perDepth, stack, stackParent } = w;
  let top = w.top;
  let count = w.count;
  let maxDepth = w.maxDepth;
  const end = count + budget;
  while (top > 0 && count < end) {
    top--;
    const i = stack[top]!;
    const p = stackParent[top]!;
    const r = count++;
    const d = p >= 0 ? depth[p]! + 1 : 0;
    source[r] = i;
    depth[r] = d;
    perDepth[d]!++;
    if (d > maxDepth) maxDepth = d;
    parentRank[r] = p;
    firstChild[r] = -1;
    lastChild[r] = -1;
    nextSibling[r] = -1;
    prevSibling[r] = -1;
    if (p >= 0) {
      // Siblings are visited in position order, so the previous one is the last one ranked.
      const prev = lastChild[p]!;
      if (prev < 0) firstChild[p] = r;
      else nextSibling[prev] = r;
      prevSibling[r] = prev;
      lastChild[p] = r;
    }
    // Children pushed last first, so they are visited in position order.
    for (let c = childStart[i + 1]! - 1; c >= childStart[i]!; c--) {
      stack[top] = children[c]!;
      stackParent[top] = r;
      top++;
    }
  }
  w.top = top;
  w.count = count;
  w.maxDepth = maxDepth;
}

/** Weights and subtree ends of ranks `from..to`, children first (every descendant has a larger rank). */
function weigh(
  ownWeight: Float64Array,
  sum: boolean,
  source: Int32Array,
  parentRank: Int32Array,
  weight: Float64Array,
  childSum: Float64Array,
  subtreeEnd: Int32Array,
  from: number,
  to: number,
) {
  for (let r = to - 1; r >= from; r--) {
    const own = Math.max(0, ownWeight[source[r]!] ?? 0);
    const children = childSum[r]!;
    const w = sum ? own + children : Math.max(own, children);
    weight[r] = w;
    const end = Math.max(r + 1, subtreeEnd[r]!);
    subtreeEnd[r] = end;
    const p = parentRank[r]!;
    if (p >= 0) {
      childSum[p] = childSum[p]! + w;
      if (end > subtreeEnd[p]!) subtreeEnd[p] = end;
    }
  }
}

/** Places the children of ranks `from..to` inside their parents (parents come first). */
function place(
  firstChild: Int32Array,
  nextSibling: Int32Array,
  weight: Float64Array,
  childSum: Float64Array,
  x0: Float64Array,
  x1: Float64Array,
  from: number,
  to: number,
) {
  for (let r = from; r < to; r++) {
    const first = firstChild[r]!;
    if (first < 0) continue;
    let siblings = 0;
    for (let c = first; c >= 0; c = nextSibling[c]!) siblings++;
    const total = weight[r]!;
    // A weightless frame's children share it equally; otherwise each child gets its weight's
    // share but at least a minimum one, and the frame's own weight keeps its place on the right.
    const floor = total > 0 ? Math.min(MIN_SHARE, 0.5 / siblings) * total : 1;
    const selfPart = total > 0 ? Math.max(0, total - childSum[r]!) : 0;
    let denominator = selfPart;
    for (let c = first; c >= 0; c = nextSibling[c]!) denominator += Math.max(weight[c]!, floor);
    const span = x1[r]! - x0[r]!;
    let at = x0[r]!;
    for (let c = first; c >= 0; c = nextSibling[c]!) {
      x0[c] = at;
      at += (span * Math.max(weight[c]!, floor)) / denominator;
      x1[c] = at;
    }
  }
}

/**
 * Turns an outline's frames into layout input for `mode`; the input's index `i` is `frames[i]`,
 * where whatever else drawing needs (titles, statuses) is read. `now` (milliseconds since the
 * epoch) is where the wall time of frames still running ends; `ownCosts` are the outline's, for
 * frames `expandOutline` did not make (which know theirs by index: `knownOwnCosts`). A frame
 * weighs the priced part of its own cost: tokens of a model with no known price weigh nothing.
 * A frame of a preview (`expandPreview`) also weighs what the preview leaves out under it.
 */
export function layoutInputOf(
  frames: readonly FrameOutline[],
  mode: WeightMode,
  now: number,
  ownCosts: TreeOutline["own_costs"] = {},
): LayoutInput {
  const n = frames.length;
  // An outline made from the backend's columns knows its parents by index already; the layout
  // only reads them, so the column itself is the input.
  const known = knownParentIndexes(frames);
  const parent = known ?? new Int32Array(n);
  if (known === undefined) {
    const indexOf = new Map<string, number>();
    frames.forEach((f, i) => indexOf.set(f.id, i));
    frames.forEach((f, i) => {
      // A frame whose parent is missing from the outline cannot be placed: it is made its own
      // parent, which no walk from the root reaches, rather than drawn as a second root.
      parent[i] = f.parent === null ? -1 : (indexOf.get(f.parent) ?? i);
    });
  }
  const position = new Float64Array(n);
  const ownWeight = new Float64Array(n);
  const costs = mode === "cost" ? knownOwnCosts(frames) : undefined;
  const folded = previewDrawsBy(mode) ? knownFoldedWeights(frames, mode) : undefined;
  frames.forEach((f, i) => {
    position[i] = f.position;
    ownWeight[i] =
      (mode !== "cost"
        ? ownWeightOf(f, mode, now)
        : costs !== undefined
          ? costs[i]!
          : (ownCosts[f.id] ?? 0)) + (folded?.[i] ?? 0);
  });
  return { count: n, parent, position, ownWeight, combine: mode === "time" ? "span" : "sum" };
}

function ownWeightOf(frame: FrameOutline, mode: Exclude<WeightMode, "cost">, now: number): number {
  switch (mode) {
    // The generated types allow null for numbers (JSON has no NaN); a missing count weighs 0.
    case "tokens":
      return frame.tokens;
    case "messages":
      return frame.message_count;
    case "equal":
      return 1;
    case "time":
      return frame.started_at === null
        ? 0
        : Math.max(0, (frame.ended_at ?? now) - frame.started_at);
  }
}
