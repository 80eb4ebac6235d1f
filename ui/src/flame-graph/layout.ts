// The flame graph's pure layout: a tree of frames in, rectangles out, as column arrays.
//
// Nothing here knows about canvases, pixels or time of day: x runs from 0 to 1 across the root,
// y is a row number (the depth), and the result depends only on the input. The renderer and the
// view read these columns; the unit tests check them directly.

import type {
  FrameOutline_Serialize as FrameOutline,
  Status,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";

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

/** Lays out `input`; the root is the first frame with no parent. */
export function layoutTree(input: LayoutInput): FlameLayout {
  const n = input.count;
  const { parent, position, ownWeight } = input;

  // Children of each frame, as compressed rows sorted by position.
  let root = -1;
  const childCount = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const p = parent[i] ?? -1;
    if (p < 0) {
      if (root < 0) root = i;
    } else {
      childCount[p + 1] = (childCount[p + 1] ?? 0) + 1;
    }
  }
  const childStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) childStart[i + 1] = (childStart[i] ?? 0) + (childCount[i + 1] ?? 0);
  const fill = childStart.slice(0, n);
  const children = new Int32Array(Math.max(0, childStart[n] ?? 0));
  for (let i = 0; i < n; i++) {
    const p = parent[i] ?? -1;
    if (p >= 0) children[fill[p]!++] = i;
  }
  for (let i = 0; i < n; i++) {
    const from = childStart[i]!;
    const to = childStart[i + 1]!;
    if (to - from > 1) {
      const sorted = Array.from(children.subarray(from, to)).sort(
        (a, b) => position[a]! - position[b]! || a - b,
      );
      children.set(sorted, from);
    }
  }

  // Depth-first ranks, without recursion: a tree may be thousands of frames deep.
  const source = new Int32Array(n);
  const rankOf = new Int32Array(n).fill(-1);
  const depth = new Int32Array(n);
  let count = 0;
  if (root >= 0) {
    const stack: number[] = [root];
    const depthStack: number[] = [0];
    while (stack.length > 0) {
      const i = stack.pop()!;
      const d = depthStack.pop()!;
      rankOf[i] = count;
      source[count] = i;
      depth[count] = d;
      count++;
      for (let c = childStart[i + 1]! - 1; c >= childStart[i]!; c--) {
        stack.push(children[c]!);
        depthStack.push(d + 1);
      }
    }
  }

  const parentRank = new Int32Array(count).fill(-1);
  const firstChild = new Int32Array(count).fill(-1);
  const nextSibling = new Int32Array(count).fill(-1);
  const prevSibling = new Int32Array(count).fill(-1);
  for (let r = 0; r < count; r++) {
    const i = source[r]!;
    let prev = -1;
    for (let c = childStart[i]!; c < childStart[i + 1]!; c++) {
      const cr = rankOf[children[c]!]!;
      parentRank[cr] = r;
      if (prev < 0) firstChild[r] = cr;
      else nextSibling[prev] = cr;
      prevSibling[cr] = prev;
      prev = cr;
    }
  }

  // Subtree weights and extents, children before parents (reverse rank order).
  const weight = new Float64Array(count);
  const childSum = new Float64Array(count);
  const subtreeEnd = new Int32Array(count);
  for (let r = count - 1; r >= 0; r--) {
    const own = Math.max(0, ownWeight[source[r]!] ?? 0);
    const sum = childSum[r]!;
    const w = input.combine === "sum" ? own + sum : Math.max(own, sum);
    weight[r] = w;
    const p = parentRank[r]!;
    if (p >= 0) childSum[p] = childSum[p]! + w;
    let end = r + 1;
    for (let c = firstChild[r]!; c >= 0; c = nextSibling[c]!) end = subtreeEnd[c]!;
    subtreeEnd[r] = end;
  }

  // Horizontal extents, parents before children.
  const x0 = new Float64Array(count);
  const x1 = new Float64Array(count);
  if (count > 0) x1[0] = 1;
  for (let r = 0; r < count; r++) {
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

  // The per-depth index: a depth-first walk meets each depth's frames from left to right.
  let maxDepth = -1;
  for (let r = 0; r < count; r++) maxDepth = Math.max(maxDepth, depth[r]!);
  const perDepth = new Int32Array(maxDepth + 1);
  for (let r = 0; r < count; r++) perDepth[depth[r]!]!++;
  const rows = Array.from(perDepth, (size) => new Int32Array(size));
  const rowFill = new Int32Array(maxDepth + 1);
  for (let r = 0; r < count; r++) {
    const d = depth[r]!;
    rows[d]![rowFill[d]!++] = r;
  }

  return {
    count,
    source: source.slice(0, count),
    depth: depth.slice(0, count),
    x0,
    x1,
    parent: parentRank,
    firstChild,
    nextSibling,
    prevSibling,
    subtreeEnd,
    weight,
    rows,
  };
}

/** The frames of an outline as layout input, plus what drawing needs by input index. */
export interface OutlineColumns {
  readonly input: LayoutInput;
  readonly ids: readonly string[];
  readonly titles: readonly string[];
  readonly statuses: readonly Status[];
  /** Whether each frame's changes were rolled back (the backend's `rolled_back_at`). */
  readonly rolledBack: readonly boolean[];
}

/**
 * Turns an outline's frames into layout input for `mode`. `now` (milliseconds since the epoch)
 * is where the wall time of frames still running ends; `costs` are the outline's (a frame
 * weighs the priced part of its own cost: tokens of a model with no known price weigh nothing).
 */
export function outlineColumns(
  frames: readonly FrameOutline[],
  mode: WeightMode,
  now: number,
  costs: TreeOutline["costs"] = {},
): OutlineColumns {
  const n = frames.length;
  const indexOf = new Map<string, number>();
  frames.forEach((f, i) => indexOf.set(f.id, i));
  const parent = new Int32Array(n);
  const position = new Float64Array(n);
  const ownWeight = new Float64Array(n);
  frames.forEach((f, i) => {
    // A frame whose parent is missing from the outline cannot be placed: it is made its own
    // parent, which no walk from the root reaches, rather than drawn as a second root.
    parent[i] = f.parent === null ? -1 : (indexOf.get(f.parent) ?? i);
    position[i] = f.position;
    ownWeight[i] = mode === "cost" ? (costs[f.id]?.own.micro_usd ?? 0) : ownWeightOf(f, mode, now);
  });
  return {
    input: {
      count: n,
      parent,
      position,
      ownWeight,
      combine: mode === "time" ? "span" : "sum",
    },
    ids: frames.map((f) => f.id),
    titles: frames.map((f) => f.title),
    statuses: frames.map((f) => f.status),
    rolledBack: frames.map((f) => f.rolled_back_at !== null),
  };
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
