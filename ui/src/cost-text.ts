// Costs in words, for the graph's tooltip, the frame header and the context inspector. The
// backend prices every reply (`flame_model::cost`); this only writes the amounts it sends, by the
// same rules as `format_usd` and `CostSummary::describe` there, so the window, the command line
// and the Markdown export say the same thing. The rules are checked against Rust's own words:
// `cost-text.cases.json` is written by a Rust test and read by this file's test.

import type {
  CostSummary,
  FrameCost_Serialize as FrameCost,
  TreeOutline_Serialize as TreeOutline,
  Usage,
} from "./bindings";

/** Micro-dollars in a dollar: the backend's unit for amounts and prices. */
export const MICRO_USD_PER_USD = 1_000_000;

/** `micro` rounded half up to `decimals` places of a dollar, as `$d.dd…`. */
function dollars(micro: number, decimals: 2 | 4): string {
  const step = 10 ** (6 - decimals);
  const scaled = Math.floor((micro + step / 2) / step);
  const unit = 10 ** decimals;
  const cents = String(scaled % unit).padStart(decimals, "0");
  return `$${Math.floor(scaled / unit)}.${cents}`;
}

/** An amount in micro-dollars: `$12.34`, `$0.42`, `$0.0031`, `<$0.0001`, `$0.00`. */
export function formatUsd(micro: number): string {
  if (micro <= 0) return "$0.00";
  if (micro < 100) return "<$0.0001";
  if (micro < 10_000) return dollars(micro, 4);
  return dollars(micro, 2);
}

/** Every token a usage counts: input, output, cache reads and writes of either lifetime. */
export function totalTokens(usage: Usage): number {
  return (
    usage.input_tokens +
    usage.output_tokens +
    usage.cache_read_tokens +
    usage.cache_write_tokens +
    usage.cache_write_long_tokens
  );
}

/** A cost in words: `$0.42`, `$0.42 + 1,234 tokens of m at an unknown price`, … */
export function describeCost(cost: CostSummary): string {
  const unpriced = () =>
    `${totalTokens(cost.unpriced_usage).toLocaleString("en-US")} tokens of ${cost.unpriced_models.join(", ")}`;
  switch (cost.completeness) {
    case "none":
      return "nothing recorded";
    case "complete":
      return formatUsd(cost.micro_usd);
    case "partial":
      return `${formatUsd(cost.micro_usd)} + ${unpriced()} at an unknown price`;
    case "unknown":
      return `price unknown: ${unpriced()}`;
  }
}

/** A frame's own cost and, when its descendants add to it, its subtree's. */
export function costPhrase(cost: FrameCost): string {
  const subtree = describeCost(cost.subtree);
  if (cost.own.completeness === "none") return `nothing here; ${subtree} with its subtree`;
  const own = describeCost(cost.own);
  const sameUsage =
    totalTokens(cost.own.usage) === totalTokens(cost.subtree.usage) &&
    cost.own.micro_usd === cost.subtree.micro_usd;
  return sameUsage ? own : `${own}; ${subtree} with its subtree`;
}

/**
 * Frame `id`'s cost as the outline carries it, which it does for the focused frame only (any
 * other is read with `frameCost`); null when its subtree recorded no usage, or for another frame.
 */
export function costOf(outline: TreeOutline, id: string): FrameCost | null {
  return id === outline.tree.focus ? (outline.focus_cost ?? null) : null;
}

/** Micro-dollars per million tokens as the dollars a person types: `3`, `0.075`. */
export function microsToDollars(micro: number): string {
  return String(micro / MICRO_USD_PER_USD);
}

/**
 * Dollars a person typed as whole micro-dollars; null for what is not a non-negative amount
 * with at most six decimals.
 */
export function dollarsToMicros(text: string): number | null {
  const match = /^\s*\$?\s*(\d*)(?:\.(\d{0,6}))?\s*$/.exec(text);
  if (match === null) return null;
  const [, whole = "", fraction = ""] = match;
  if (whole === "" && fraction === "") return null;
  const micro = Number(whole || "0") * MICRO_USD_PER_USD + Number(fraction.padEnd(6, "0"));
  return Number.isSafeInteger(micro) ? micro : null;
}
