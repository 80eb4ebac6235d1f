import { describe, expect, it } from "vitest";

import type { BudgetView_Serialize as BudgetView } from "../bindings";
import { budgetLevel } from "../budget-text";
import { outlineFrame } from "../test-backend";
import { budgetUseByRank } from "./budget-use";
import { layoutInputOf, layoutTree } from "./layout";

/** Frame `frame`'s own budget of 100 tool calls, `calls` of them spent. */
function calls(frame: string, calls: number): BudgetView {
  return {
    frame,
    budget: { micro_usd: null, tokens: null, tool_calls: 100 },
    spent: { micro_usd: 0, priced: "none", tokens: 0, tool_calls: calls },
    allowance: { bounds: [] },
  };
}

describe("budget used", () => {
  it("is graded at half, 80% and spent, by the unit most spent", () => {
    expect([0, 49, 50, 80, 99, 100, 130].map((n) => budgetLevel(calls("f", n)))).toEqual([
      1, 1, 2, 3, 3, 4, 4,
    ]);
    const both = calls("f", 10);
    both.budget = { ...both.budget!, tokens: 1_000 };
    both.spent = { ...both.spent!, tokens: 900 };
    expect(budgetLevel(both)).toBe(3);
  });

  it("colours a frame by the most spent budget on its path", () => {
    // Root > A > A1, and B beside A: the root's budget is at half, A's is spent.
    const frames = [
      outlineFrame("f0000000000", null),
      outlineFrame("f0000000001", "f0000000000"),
      outlineFrame("f0000000002", "f0000000001"),
      outlineFrame("f0000000003", "f0000000000", { position: 1 }),
    ];
    const layout = layoutTree(layoutInputOf(frames, "equal", 0));
    const use = budgetUseByRank(layout, frames, [
      calls("f0000000000", 60),
      calls("f0000000001", 100),
    ]);
    const byId = new Map(
      Array.from(layout.source, (i, rank) => [frames[i]!.id, use[rank]!] as const),
    );
    expect(Object.fromEntries(byId)).toEqual({
      f0000000000: 2,
      f0000000001: 4,
      f0000000002: 4,
      f0000000003: 2,
    });
    expect(Array.from(budgetUseByRank(layout, frames, []))).toEqual([0, 0, 0, 0]);
  });
});
