import { describe, expect, it } from "vitest";

import { BUDGET_FILLS } from "./budget-use";
import { layoutTree, type LayoutInput } from "./layout";
import {
  ROLLED_BACK_FILL,
  ROLLED_BACK_SIGN,
  ROW_HEIGHT,
  fitLabel,
  hitTest,
  paint,
  rectOnCanvas,
  type Scene,
  type Viewport,
} from "./render";

/** A root with `n` children of equal weight. */
function wide(n: number): LayoutInput {
  const count = n + 1;
  const parent = new Int32Array(count).fill(0);
  parent[0] = -1;
  return {
    count,
    parent,
    position: new Float64Array(count).map((_, i) => i),
    // The root weighs nothing itself, so its children fill it.
    ownWeight: new Float64Array(count).fill(1).fill(0, 0, 1),
    combine: "sum",
  };
}

/** A stand-in 2D context that counts what is drawn. */
function recordingContext() {
  const calls = { fillRect: 0, fillText: 0 };
  /** Each rectangle filled, with the style it was filled with; each label drawn. */
  const drawn: { rects: { style: string; x: number; y: number; w: number; h: number }[] } & {
    texts: string[];
  } = { rects: [], texts: [] };
  const ctx = {
    setTransform: () => undefined,
    clearRect: () => undefined,
    fillRect(x: number, y: number, w: number, h: number) {
      calls.fillRect++;
      drawn.rects.push({ style: String(this.fillStyle), x, y, w, h });
    },
    strokeRect: () => undefined,
    fillText: (text: string) => {
      calls.fillText++;
      drawn.texts.push(text);
    },
    setLineDash: () => undefined,
    measureText: (s: string) => ({ width: s.length * 7 }),
    createPattern: () => null,
    fillStyle: "",
    strokeStyle: "",
    lineWidth: 1,
    font: "",
    textBaseline: "",
  };
  return { ctx: ctx as unknown as CanvasRenderingContext2D, calls, drawn };
}

function scene(input: LayoutInput): Scene {
  const layout = layoutTree(input);
  return {
    layout,
    status: new Uint8Array(layout.count).fill(2),
    titleOf: (rank) => `frame ${rank}`,
    rolledBack: new Uint8Array(layout.count),
    focus: -1,
    active: -1,
    hover: -1,
    drop: null,
  };
}

const VIEW: Viewport = { x0: 0, x1: 1, scrollTop: 0, width: 100, height: 400 };

describe("paint", () => {
  it("merges frames narrower than a pixel instead of drawing each one", () => {
    const { ctx, calls } = recordingContext();
    const stats = paint(ctx, scene(wide(10_000)), VIEW, 1);
    // 10,000 children in 100 pixels: one merged mark for the row, and the root.
    expect(stats.rects).toBe(1);
    expect(stats.merged).toBe(1);
    expect(calls.fillRect).toBeLessThan(10);
  });

  it("draws only the frames in view when zoomed in", () => {
    const { ctx } = recordingContext();
    const stats = paint(ctx, scene(wide(10_000)), { ...VIEW, x0: 0.5, x1: 0.501 }, 1);
    // A thousandth of the width holds ten children, each ten pixels wide, and the root.
    expect(stats.rects).toBeGreaterThanOrEqual(11);
    expect(stats.rects).toBeLessThanOrEqual(12);
    expect(stats.merged).toBe(0);
  });

  it("skips the rows scrolled out of sight", () => {
    const chain: LayoutInput = {
      count: 100,
      parent: new Int32Array(100).map((_, i) => i - 1),
      position: new Float64Array(100),
      ownWeight: new Float64Array(100),
      combine: "sum",
    };
    const { ctx } = recordingContext();
    const stats = paint(
      ctx,
      scene(chain),
      { ...VIEW, scrollTop: 50 * ROW_HEIGHT, height: 10 * ROW_HEIGHT },
      1,
    );
    expect(stats.rects).toBe(11);
  });
});

describe("the rolled-back mark", () => {
  it("draws a band along the top of a rolled-back frame and a sign before its label", () => {
    const marked = scene(wide(4));
    marked.rolledBack[2] = 1;
    const { ctx, drawn } = recordingContext();
    // Wide enough for every frame's label.
    const view = { ...VIEW, width: 400 };
    const stats = paint(ctx, marked, view, 1);
    expect(stats.rolledBack).toBe(1);
    const bands = drawn.rects.filter((r) => r.style === ROLLED_BACK_FILL);
    const rect = rectOnCanvas(marked.layout, view, 2)!;
    expect(bands).toHaveLength(1);
    expect(bands[0]).toMatchObject({ x: rect.x, y: rect.y });
    expect(bands[0]!.h).toBeLessThan(rect.height);
    expect(drawn.texts).toContain(`${ROLLED_BACK_SIGN}frame 2`);
    expect(drawn.texts).toContain("frame 1");
    expect(drawn.texts.filter((t) => t.startsWith(ROLLED_BACK_SIGN))).toHaveLength(1);
  });

  it("draws no mark when no frame was rolled back", () => {
    const { ctx, drawn } = recordingContext();
    const stats = paint(ctx, scene(wide(4)), { ...VIEW, width: 400 }, 1);
    expect(stats.rolledBack).toBe(0);
    expect(drawn.texts).toContain("frame 2");
    expect(drawn.rects.some((r) => r.style === ROLLED_BACK_FILL)).toBe(false);
    expect(drawn.texts.some((t) => t.startsWith(ROLLED_BACK_SIGN))).toBe(false);
  });
});

describe("colouring by budget used", () => {
  it("lays each level's fill over the frames at that level, and nothing without levels", () => {
    const coloured = { ...scene(wide(4)), budgetUse: Uint8Array.from([1, 1, 4, 1, 0]) };
    const { ctx, drawn } = recordingContext();
    const view = { ...VIEW, width: 400 };
    paint(ctx, coloured, view, 1);
    const filled = (level: number) => drawn.rects.filter((r) => r.style === BUDGET_FILLS[level]);
    expect(filled(1)).toHaveLength(3);
    expect(filled(4)).toHaveLength(1);
    expect(filled(4)[0]).toMatchObject({ x: rectOnCanvas(coloured.layout, view, 2)!.x });
    const plain = recordingContext();
    paint(plain.ctx, scene(wide(4)), view, 1);
    expect(plain.drawn.rects.some((r) => BUDGET_FILLS.slice(1).includes(r.style))).toBe(false);
  });
});

describe("hitTest and rectOnCanvas", () => {
  it("find the frame under a point and where a frame is drawn", () => {
    const { layout } = scene(wide(4));
    const rect = rectOnCanvas(layout, VIEW, 2)!;
    expect(rect).toMatchObject({ x: 25, y: ROW_HEIGHT, width: 25 });
    expect(hitTest(layout, VIEW, rect.x + 1, rect.y + 5)).toBe(2);
    expect(hitTest(layout, VIEW, 50, 5)).toBe(0);
    expect(hitTest(layout, VIEW, 50, 3 * ROW_HEIGHT)).toBe(-1);
  });
});

describe("fitLabel", () => {
  const measure = (s: string) => s.length * 7;

  it("keeps a label that fits", () => {
    expect(fitLabel(measure, "Login", 100)).toBe("Login");
  });

  it("cuts a long label with an ellipsis to fit", () => {
    const cut = fitLabel(measure, "User Authentication", 70);
    expect(cut.endsWith("…")).toBe(true);
    expect(measure(cut)).toBeLessThanOrEqual(70);
    expect(cut).toBe("User Auth…");
  });

  it("draws nothing when not even one letter fits", () => {
    expect(fitLabel(measure, "User Authentication", 10)).toBe("");
  });
});
