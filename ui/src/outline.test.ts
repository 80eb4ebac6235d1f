import { describe, expect, it } from "vitest";

import type {
  OutlineColumns_Serialize as OutlineColumns,
  OutlinePreview_Serialize as OutlinePreview,
} from "./bindings";
import { pathToRoot } from "./chat/frame-header";
import { layoutInputOf, layoutTree, WEIGHT_MODES } from "./flame-graph/layout";
import {
  expandOutline,
  expandPreview,
  knownOwnCosts,
  knownParentIndexes,
  previewDrawsBy,
} from "./outline";
import previewCasesText from "./outline-preview.cases.json?raw";
import { outlineFrame } from "./test-backend";
import { frameCost } from "./test-costs";

const TREE = {
  id: "t0000000001",
  title: "Build",
  root: "f0000000001",
  focus: "f0000000003",
  created_at: 0,
  workspace: null,
};

/** Three frames by columns: a failed child listed before its root, and its retry. */
const COLUMNS: OutlineColumns = {
  tree: TREE,
  seq: 9,
  id: ["f0000000002", "f0000000001", "f0000000003"],
  parent: [1, -1, 1],
  position: [0, 0, 1],
  title: ["Parse", "Build", "Parse again"],
  status: [0, 1, 1],
  statuses: ["failed", "in_progress"],
  time_base: 500,
  time_unit: 1,
  started_after_base: [500, 0, 2_500],
  ended_after_start: [1_000, null, null],
  message_count: [4, 0, 2],
  tokens: [120, 0, 30],
  success_criteria_compacted: [[0, "parses"]],
  retry_of: [[2, "f0000000002"]],
  rolled_back_at: [[0, 2_500]],
  own_cost_steps: [0, 2],
  own_costs: [1_500, 700],
  focus_cost: frameCost(700),
  budgets: [],
};

describe("expandOutline", () => {
  it("makes one frame outline per column entry, every field in place", () => {
    const outline = expandOutline(COLUMNS);
    expect(outline.tree).toEqual(TREE);
    expect(outline.seq).toBe(9);
    expect(outline.frames).toEqual([
      outlineFrame("f0000000002", "f0000000001", {
        title: "Parse",
        status: "failed",
        success_criteria_compacted: "parses",
        started_at: 1_000,
        ended_at: 2_000,
        message_count: 4,
        tokens: 120,
        rolled_back_at: 2_500,
      }),
      outlineFrame("f0000000001", null, { title: "Build", started_at: 500 }),
      outlineFrame("f0000000003", "f0000000001", {
        position: 1,
        title: "Parse again",
        retry_of: "f0000000002",
        started_at: 3_000,
        message_count: 2,
        tokens: 30,
      }),
    ]);
    // The costs stay a column by index, not an object keyed by every frame's id.
    expect("own_costs" in outline).toBe(false);
    expect(Array.from(knownOwnCosts(outline.frames) ?? [])).toEqual([1_500, 0, 700]);
    expect(outline.focus_cost).toEqual(frameCost(700));
  });

  it("leaves the costs out when there are none, as the backend's outline does", () => {
    const outline = expandOutline({
      ...COLUMNS,
      own_cost_steps: [],
      own_costs: [],
      focus_cost: null,
    });
    expect("own_costs" in outline).toBe(false);
    expect(knownOwnCosts(outline.frames)).toBeUndefined();
    expect("focus_cost" in outline).toBe(false);
  });

  it("makes times whole from offsets in seconds, an end without a start from the base", () => {
    const base = 1_767_225_000_000;
    const outline = expandOutline({
      ...COLUMNS,
      time_base: base,
      time_unit: 1_000,
      started_after_base: [600, null, 0],
      ended_after_start: [6, 700, -2],
    });
    expect(outline.frames.map((f) => [f.started_at, f.ended_at])).toEqual([
      [base + 600_000, base + 606_000],
      [null, base + 700_000],
      [base, base - 2_000],
    ]);
  });

  it("finds each own cost's frame by adding up the steps", () => {
    const outline = expandOutline({ ...COLUMNS, own_cost_steps: [1, 1], own_costs: [5, 9] });
    expect(Array.from(knownOwnCosts(outline.frames) ?? [])).toEqual([0, 5, 9]);
  });

  it("keeps a frame whose parent is itself (the backend's mark of a parent not in the tree)", () => {
    const outline = expandOutline({ ...COLUMNS, parent: [0, -1, 1] });
    expect(outline.frames[0]?.parent).toBe("f0000000002");
  });
});

describe("the parents of an expanded outline", () => {
  it("are known by index, for the frame list expandOutline made only", () => {
    const outline = expandOutline(COLUMNS);
    expect(Array.from(knownParentIndexes(outline.frames) ?? [])).toEqual([1, -1, 1]);
    expect(knownParentIndexes([...outline.frames])).toBeUndefined();
  });

  it("give the layout and the header's path what looking parents up by id gives", () => {
    const outline = expandOutline(COLUMNS);
    const copy = { ...outline, frames: outline.frames.map((f) => ({ ...f })) };
    expect(layoutInputOf(outline.frames, "tokens", 0)).toEqual(
      layoutInputOf(copy.frames, "tokens", 0),
    );
    for (const id of COLUMNS.id) {
      expect(pathToRoot(outline, id).map((f) => f.id)).toEqual(
        pathToRoot(copy, id).map((f) => f.id),
      );
    }
    expect(pathToRoot(outline, "f0000000003").map((f) => f.id)).toEqual([
      "f0000000001",
      "f0000000003",
    ]);
  });

  it("give the cost width what the costs by id give", () => {
    const outline = expandOutline(COLUMNS);
    const copy = outline.frames.map((f) => ({ ...f }));
    const byId = { f0000000002: 1_500, f0000000003: 700 };
    const weights = layoutInputOf(outline.frames, "cost", 0).ownWeight;
    expect(Array.from(weights)).toEqual([1_500, 0, 700]);
    expect(weights).toEqual(layoutInputOf(copy, "cost", 0, byId).ownWeight);
  });
});

/** A tree's whole columns and its preview, as Rust writes them (`flame_api::outline`'s test). */
const PREVIEW_CASE = JSON.parse(previewCasesText) as {
  whole: OutlineColumns;
  preview: OutlinePreview;
};

describe("a preview", () => {
  /** Each frame's depth and extent by id, laid out by `mode`. */
  function placed(outline: ReturnType<typeof expandOutline>, mode: (typeof WEIGHT_MODES)[number]) {
    const layout = layoutTree(layoutInputOf(outline.frames, mode, 0));
    const byId = new Map<string, [number, number, number]>();
    for (let r = 0; r < layout.count; r++) {
      const frame = outline.frames[layout.source[r]!]!;
      byId.set(frame.id, [layout.depth[r]!, layout.x0[r]!, layout.x1[r]!]);
    }
    return byId;
  }

  it("puts each of its frames where the whole tree's layout puts it", () => {
    const whole = expandOutline(PREVIEW_CASE.whole);
    const { outline: preview, wholeFrames } = expandPreview(PREVIEW_CASE.preview);
    expect(wholeFrames).toBe(whole.frames.length);
    expect(preview.frames.length).toBeLessThan(whole.frames.length);
    expect(PREVIEW_CASE.preview.folded.index.length).toBeGreaterThan(0);
    for (const mode of WEIGHT_MODES.filter(previewDrawsBy)) {
      const all = placed(whole, mode);
      const top = placed(preview, mode);
      expect(top.size, mode).toBe(preview.frames.length);
      for (const [id, [depth, x0, x1]] of top) {
        const [d, w0, w1] = all.get(id)!;
        expect(depth, `${mode}: ${id}`).toBe(d);
        expect(x0, `${mode}: ${id}`).toBeCloseTo(w0, 12);
        expect(x1, `${mode}: ${id}`).toBeCloseTo(w1, 12);
      }
    }
  });

  it("is not laid out as the whole tree without what it leaves out", () => {
    // Without its folded weights, the frames with subtrees left out would be narrower: the
    // test above would fail if the layout did not add them.
    const whole = placed(expandOutline(PREVIEW_CASE.whole), "tokens");
    const bare = placed(expandOutline(PREVIEW_CASE.preview.columns), "tokens");
    const moved = [...bare].filter(([id, [, x0, x1]]) => {
      const [, w0, w1] = whole.get(id)!;
      return Math.abs(x0 - w0) > 1e-9 || Math.abs(x1 - w1) > 1e-9;
    });
    expect(moved.length).toBeGreaterThan(0);
  });

  it("is drawn by the modes whose weights add up over a subtree only", () => {
    expect(WEIGHT_MODES.filter(previewDrawsBy)).toEqual(["tokens", "equal", "messages"]);
  });
});
