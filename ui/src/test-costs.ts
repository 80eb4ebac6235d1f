// Costs as the backend sends them, for tests (see `flame_model::cost`).

import type { CostSummary, FrameCost_Serialize as FrameCost, Usage } from "./bindings";

export const NO_TOKENS: Usage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cache_write_long_tokens: 0,
};

/** A cost of `micro` micro-dollars over `tokens` input tokens, some of them unpriced. */
export function summary(
  micro: number,
  completeness: CostSummary["completeness"],
  tokens = 1_000,
  unpriced: { model: string; tokens: number } | null = null,
): CostSummary {
  return {
    micro_usd: micro,
    completeness,
    usage: { ...NO_TOKENS, input_tokens: tokens },
    unpriced_usage: { ...NO_TOKENS, input_tokens: unpriced?.tokens ?? 0 },
    unpriced_models: unpriced === null ? [] : [unpriced.model],
  };
}

/** A frame's cost: `own` micro-dollars of its own, `subtree` with its descendants. */
export function frameCost(own: number, subtree = own): FrameCost {
  return {
    own: summary(own, own === 0 ? "none" : "complete", own === 0 ? 0 : 1_000),
    subtree: summary(subtree, subtree === 0 ? "none" : "complete", subtree === own ? 1_000 : 3_000),
    models: [],
  };
}
