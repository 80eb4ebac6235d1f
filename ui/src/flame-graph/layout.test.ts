import { describe, expect, it } from "vitest";

import type { FrameOutline_Serialize as FrameOutline, Status } from "../bindings";
import {
  MIN_SHARE,
  layoutSteps,
  layoutTree,
  layoutInputOf,
  type FlameLayout,
  type LayoutInput,
} from "./layout";
import { outlineFrame } from "../test-backend";

function frame(
  id: string,
  parent: string | null,
  position: number,
  status: Status,
  tokens: number,
  more: Partial<FrameOutline> = {},
): FrameOutline {
  return outlineFrame(id, parent, { position, status, tokens, ...more });
}

// The specification's example tree, listed out of order on purpose: the outline promises none.
const SPEC_TREE: FrameOutline[] = [
  frame("B2", "B", 1, "planned", 0),
  frame("Root", null, 0, "in_progress", 100),
  frame("B", "Root", 1, "in_progress", 100),
  frame("A1", "A", 0, "completed", 200),
  frame("A", "Root", 0, "completed", 100),
  frame("A2", "A", 1, "completed", 100),
  frame("B1", "B", 0, "in_progress", 300),
];

function laidOut(frames: FrameOutline[], mode: Parameters<typeof layoutInputOf>[1] = "tokens") {
  const input = layoutInputOf(frames, mode, 10_000);
  const layout = layoutTree(input);
  const rankOf = new Map<string, number>();
  for (let r = 0; r < layout.count; r++) rankOf.set(frames[layout.source[r]!]!.id, r);
  const at = (id: string) => {
    const r = rankOf.get(id);
    if (r === undefined) throw new Error(`${id} is not laid out`);
    return {
      rank: r,
      x0: layout.x0[r]!,
      x1: layout.x1[r]!,
      depth: layout.depth[r]!,
      weight: layout.weight[r]!,
    };
  };
  return { layout, at };
}

function chain(depth: number): LayoutInput {
  const parent = new Int32Array(depth).map((_, i) => i - 1);
  return {
    count: depth,
    parent,
    position: new Float64Array(depth),
    ownWeight: new Float64Array(depth).fill(1),
    combine: "sum",
  };
}

function expectRowsSorted(layout: FlameLayout) {
  for (const row of layout.rows) {
    for (let k = 1; k < row.length; k++) {
      expect(layout.x0[row[k]!]).toBeGreaterThanOrEqual(layout.x1[row[k - 1]!]! - 1e-12);
    }
  }
}

describe("layoutTree on the specification's tree", () => {
  const { layout, at } = laidOut(SPEC_TREE);

  it("puts the root on top across the whole width", () => {
    expect(at("Root")).toMatchObject({ rank: 0, depth: 0, x0: 0, x1: 1 });
    expect(layout.rows.map((r) => r.length)).toEqual([1, 2, 4]);
  });

  it("weighs each subtree by its own tokens plus its descendants'", () => {
    expect(at("A").weight).toBe(400);
    expect(at("B").weight).toBe(400);
    expect(at("Root").weight).toBe(900);
  });

  it("orders siblings by position and sizes them by weight, leaving the parent's own share", () => {
    // Root's 100 own tokens keep 1/9 of the width on the right.
    expect(at("A").x0).toBe(0);
    expect(at("A").x1).toBeCloseTo(4 / 9);
    expect(at("B").x0).toBeCloseTo(4 / 9);
    expect(at("B").x1).toBeCloseTo(8 / 9);
    expect(at("A1").x1 - at("A1").x0).toBeCloseTo((4 / 9) * (200 / 400));
    expect(at("A2").x0).toBeCloseTo(at("A1").x1);
  });

  it("gives a weightless planned frame a minimum share of its parent", () => {
    const b2 = at("B2");
    const b = at("B");
    expect(b2.x1 - b2.x0).toBeGreaterThan(0);
    // B2 weighs MIN_SHARE of B's 400 tokens, next to B1's 300 and B's own 100.
    expect((b2.x1 - b2.x0) / (b.x1 - b.x0)).toBeCloseTo(
      (MIN_SHARE * 400) / (400 + MIN_SHARE * 400),
    );
    expect(b2.x1).toBeLessThanOrEqual(b.x1 + 1e-12);
  });

  it("links parents, children and siblings by rank", () => {
    expect(layout.parent[at("A1").rank]).toBe(at("A").rank);
    expect(layout.firstChild[at("Root").rank]).toBe(at("A").rank);
    expect(layout.nextSibling[at("A").rank]).toBe(at("B").rank);
    expect(layout.prevSibling[at("B").rank]).toBe(at("A").rank);
    expect(layout.nextSibling[at("B").rank]).toBe(-1);
    expect(layout.subtreeEnd[at("A").rank]).toBe(at("A2").rank + 1);
    expect(layout.subtreeEnd[at("Root").rank]).toBe(7);
    expectRowsSorted(layout);
  });

  it("weighs by frames, messages or wall time on request", () => {
    expect(laidOut(SPEC_TREE, "equal").at("Root").weight).toBe(7);
    const timed = SPEC_TREE.map((f) =>
      f.id === "Root"
        ? { ...f, started_at: 1_000, ended_at: null }
        : f.id === "B"
          ? { ...f, started_at: 2_000, ended_at: 4_000 }
          : f,
    );
    const time = laidOut(timed, "time");
    // Root has run from 1 000 until now (10 000); its children's time is inside its own.
    expect(time.at("Root").weight).toBe(9_000);
    expect(time.at("B").weight).toBe(2_000);
    const counted = SPEC_TREE.map((f) => ({ ...f, message_count: 2 }));
    expect(laidOut(counted, "messages").at("Root").weight).toBe(14);
  });
});

describe("layoutTree edge cases", () => {
  it("draws a tree whose weights are all zero as equal shares", () => {
    const { at } = laidOut(SPEC_TREE.map((f) => ({ ...f, tokens: 0 })));
    expect(at("A").x1).toBeCloseTo(0.5);
    expect(at("B1").x1 - at("B1").x0).toBeCloseTo(0.25);
    expect(at("B2").x0).toBeCloseTo(0.75);
  });

  it("lays out 10 000 siblings side by side without gaps or overlaps", () => {
    const frames = [frame("root", null, 0, "in_progress", 0)];
    for (let i = 0; i < 10_000; i++) {
      frames.push(frame(`c${i}`, "root", 9_999 - i, "planned", i % 3 === 0 ? 0 : 10));
    }
    const { layout, at } = laidOut(frames);
    expect(layout.rows[1]!.length).toBe(10_000);
    expectRowsSorted(layout);
    // Positions, not input order, decide the order.
    expect(at("c9999").x0).toBe(0);
    expect(at("c0").x1).toBeCloseTo(1);
    // A weightless sibling still gets a share, smaller than a weighted one's.
    const empty = at("c0").x1 - at("c0").x0;
    const weighted = at("c1").x1 - at("c1").x0;
    expect(empty).toBeGreaterThan(0);
    expect(empty).toBeLessThan(weighted);
  });

  it("lays out a chain 1 000 deep without recursion", () => {
    const layout = layoutTree(chain(1_000));
    expect(layout.count).toBe(1_000);
    expect(layout.rows.length).toBe(1_000);
    expect(layout.depth[999]).toBe(999);
    expect(layout.weight[0]).toBe(1_000);
    // Each frame's one child takes the frame's weight minus its own token.
    expect(layout.x1[999]! - layout.x0[999]!).toBeCloseTo(1 / 1_000);
    expect(layout.subtreeEnd[0]).toBe(1_000);
  });

  it("leaves out frames whose parent is not in the outline", () => {
    const frames = [...SPEC_TREE, frame("lost", "nowhere", 0, "planned", 5)];
    const { layout } = laidOut(frames);
    expect(layout.count).toBe(7);
    expect(Array.from(layout.source)).not.toContain(frames.length - 1);
  });

  it("lays out nothing for an empty outline", () => {
    const layout = layoutTree(layoutInputOf([], "tokens", 0));
    expect(layout.count).toBe(0);
    expect(layout.rows).toEqual([]);
  });
});

describe("the cost width mode", () => {
  it("weighs each frame by what its own replies cost, its subtree by theirs", () => {
    // Root spent $1, A $2 (A1 $3 under it), B nothing; B2 a model with no known price only,
    // which the outline does not list (its priced own cost is nothing).
    const costs = { Root: 1_000_000, A: 2_000_000, A1: 3_000_000 };
    const input = layoutInputOf(SPEC_TREE, "cost", 10_000, costs);
    const layout = layoutTree(input);
    const at = (id: string) => layout.source.indexOf(SPEC_TREE.findIndex((f) => f.id === id));
    expect(input.combine).toBe("sum");
    expect(layout.weight[at("A1")]).toBe(3_000_000);
    expect(layout.weight[at("A")]).toBe(5_000_000);
    expect(layout.weight[at("B")]).toBe(0);
    expect(layout.weight[at("B2")]).toBe(0);
    expect(layout.weight[at("Root")]).toBe(6_000_000);
    // Of the root's $6: its own $1 keeps its place, A takes $5, and B, which cost nothing,
    // keeps the minimum share of the total so it can still be pointed at.
    const floor = MIN_SHARE * 6;
    const a = layout.x1[at("A")]! - layout.x0[at("A")]!;
    const b = layout.x1[at("B")]! - layout.x0[at("B")]!;
    expect(a).toBeCloseTo(5 / (1 + 5 + floor), 9);
    expect(b).toBeCloseTo(floor / (1 + 5 + floor), 9);
  });

  it("lays an outline with no costs out as frames of no weight", () => {
    const { layout, at } = laidOut(SPEC_TREE, "cost");
    expect(Array.from(layout.weight).every((w) => w === 0)).toBe(true);
    expect(at("A").x1 - at("A").x0).toBeCloseTo(at("B").x1 - at("B").x0, 9);
  });
});

describe("layoutSteps", () => {
  /** A tree of `n` frames with random parents among the earlier ones, siblings out of order. */
  function shuffled(n: number): LayoutInput {
    let state = 7;
    const random = () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
    const parent = new Int32Array(n).map((_, i) => (i === 0 ? -1 : Math.floor(random() * i)));
    return {
      count: n,
      parent,
      position: new Float64Array(n).map(() => Math.floor(random() * 5)),
      ownWeight: new Float64Array(n).map(() => (random() < 0.2 ? 0 : Math.floor(random() * 100))),
      combine: "sum",
    };
  }

  function runSteps(input: LayoutInput, step: number): { layout: FlameLayout; yields: number } {
    const steps = layoutSteps(input, step);
    let yields = 0;
    for (;;) {
      const next = steps.next();
      if (next.done === true) return { layout: next.value, yields };
      yields++;
    }
  }

  it("lays a tree out the same whatever the size of its steps", () => {
    const input = shuffled(2_000);
    const whole = layoutTree(input);
    expect(whole.count).toBe(2_000);
    expectRowsSorted(whole);
    for (const step of [1, 3, 64, 5_000]) {
      const { layout } = runSteps(input, step);
      expect(layout).toEqual(whole);
    }
  });

  it("stops every `step` frames in each of its eight passes over them", () => {
    const input = shuffled(2_000);
    // A pass over 2,000 frames in steps of 100 stops 20 times; a few more stops come between
    // passes, where each large column is made.
    expect(runSteps(input, 100).yields).toBeGreaterThanOrEqual(8 * 20);
    expect(runSteps(input, 5_000).yields).toBeLessThan(8 + 20);
  });

  it("lays out only what the root reaches when a frame is its own parent", () => {
    const input = shuffled(50);
    input.parent[49] = 49;
    for (const step of [1, 7]) {
      const { layout } = runSteps(input, step);
      expect(layout.count).toBe(49);
      expect(layout).toEqual(layoutTree(input));
    }
  });
});
