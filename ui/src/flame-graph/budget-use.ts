// The graph coloured by budget used: each frame takes the level of the most spent budget on its
// path (its own or an ancestor's), since every budget above a frame bounds it.

import type {
  BudgetView_Serialize as BudgetView,
  FrameOutline_Serialize as FrameOutline,
} from "../bindings";
import { budgetLevel } from "../budget-text";
import type { FlameLayout } from "./layout";

/** Translucent fills laid over a frame by level (see `budgetLevel`); none for level 0. */
export const BUDGET_FILLS: readonly string[] = [
  "",
  "rgba(74, 222, 128, 0.45)",
  "rgba(250, 204, 21, 0.5)",
  "rgba(251, 146, 60, 0.6)",
  "rgba(240, 100, 90, 0.8)",
];

/** The level by rank of the most spent budget on each frame's path; ranks are in preorder. */
export function budgetUseByRank(
  layout: FlameLayout,
  frames: readonly FrameOutline[],
  budgets: readonly BudgetView[],
): Uint8Array {
  const use = new Uint8Array(layout.count);
  if (budgets.length === 0) return use;
  const own = new Map(budgets.map((b) => [b.frame, budgetLevel(b)]));
  for (let r = 0; r < layout.count; r++) {
    const p = layout.parent[r]!;
    const mine = own.get(frames[layout.source[r]!]!.id) ?? 0;
    use[r] = Math.max(mine, p >= 0 ? use[p]! : 0);
  }
  return use;
}
