// Budgets (issue 32) in words for the window: what a frame's subtree spent of its budget, and
// the numbers a person types for one. The amounts are the backend's (`flame_model::budget`).

import type {
  BudgetView_Serialize as BudgetView,
  FrameBudget_Serialize as FrameBudget,
} from "./bindings";
import { dollarsToMicros, formatUsd } from "./cost-text";

/** A whole-number limit a person typed; null for an empty field (no limit in that unit). */
export function limitOf(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  const n = Number(trimmed);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** A dollar limit a person typed, in micro-dollars; null for an empty field. */
export function dollarLimitOf(text: string): number | null {
  return text.trim() === "" ? null : dollarsToMicros(text);
}

/** Whether the frame's own budget is spent in some unit. */
export function budgetExceeded(view: BudgetView): boolean {
  const { budget, spent } = view;
  if (budget === null || spent === null) return false;
  return (
    (budget.micro_usd !== null && spent.micro_usd >= budget.micro_usd) ||
    (budget.tokens !== null && spent.tokens >= budget.tokens) ||
    (budget.tool_calls !== null && spent.tool_calls >= budget.tool_calls)
  );
}

/** Spent / budget, unit by unit: `$0.42 / $2.00 · 5 / 50 tool calls`; null without a budget. */
export function spentOfBudget(view: BudgetView): string | null {
  const { budget, spent } = view;
  if (budget === null || spent === null) return null;
  const parts: string[] = [];
  const count = (n: number) => n.toLocaleString("en-US");
  if (budget.micro_usd !== null) {
    parts.push(`${formatUsd(spent.micro_usd)} / ${formatUsd(budget.micro_usd)}`);
  }
  if (budget.tokens !== null) {
    parts.push(`${count(spent.tokens)} / ${count(budget.tokens)} tokens`);
  }
  if (budget.tool_calls !== null) {
    parts.push(`${count(spent.tool_calls)} / ${count(budget.tool_calls)} tool calls`);
  }
  return parts.join(" · ");
}

/** The budget `view`'s frame has of its own, among a tree's budgeted frames; null for none. */
export function budgetOf(budgets: readonly BudgetView[], frame: string): BudgetView | null {
  return budgets.find((b) => b.frame === frame) ?? null;
}

/** A budget from the three fields a person filled in; null when they limit nothing. */
export function budgetFromFields(usd: string, tokens: string, calls: string): FrameBudget | null {
  const budget: FrameBudget = {
    micro_usd: dollarLimitOf(usd),
    tokens: limitOf(tokens),
    tool_calls: limitOf(calls),
  };
  return budget.micro_usd === null && budget.tokens === null && budget.tool_calls === null
    ? null
    : budget;
}

/**
 * How much of a frame's own budget is spent, as the graph colours it: 0 without a budget, then
 * 1 under half, 2 half or more, 3 at 80% or more (the agent is told to finish), 4 spent; by the
 * unit most spent, as the backend's `BudgetLevel`.
 */
export function budgetLevel(view: BudgetView): number {
  const { budget, spent } = view;
  if (budget === null || spent === null) return 0;
  const shares = [
    [spent.micro_usd, budget.micro_usd],
    [spent.tokens, budget.tokens],
    [spent.tool_calls, budget.tool_calls],
  ] as const;
  let most = 0;
  for (const [used, limit] of shares) {
    if (limit === null) continue;
    most = Math.max(most, limit === 0 ? 1 : used / limit);
  }
  if (most >= 1) return 4;
  if (most >= 0.8) return 3;
  return most >= 0.5 ? 2 : 1;
}
