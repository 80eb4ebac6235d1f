import { describe, expect, it } from "vitest";

import type { CostSummary, FrameCost_Serialize as FrameCost } from "./bindings";
import { costPhrase, describeCost, dollarsToMicros, formatUsd, microsToDollars } from "./cost-text";
import casesText from "./cost-text.cases.json?raw";
import { summary } from "./test-costs";

/** What Rust writes for each case (`flame_model::cost`'s test writes the file; `make bless`). */
interface Cases {
  amounts: [number, string][];
  summaries: { cost: CostSummary; text: string }[];
}

const CASES = JSON.parse(casesText) as Cases;

describe("amounts", () => {
  it("read as dollars, as Rust's format_usd writes them", () => {
    expect(CASES.amounts.length).toBeGreaterThan(10);
    for (const [micro, text] of CASES.amounts) expect(formatUsd(micro)).toBe(text);
  });

  it("say what they cover, as Rust's CostSummary::describe says it", () => {
    expect(CASES.summaries.map((c) => c.cost.completeness).sort()).toEqual(
      expect.arrayContaining(["complete", "none", "partial", "unknown"]),
    );
    for (const { cost, text } of CASES.summaries) expect(describeCost(cost)).toBe(text);
  });

  it("count an hour's cache writes among the tokens of an unknown price", () => {
    const cost = summary(0, "unknown", 0, { model: "m", tokens: 100 });
    cost.unpriced_usage = { ...cost.unpriced_usage, cache_write_long_tokens: 1_200 };
    expect(describeCost(cost)).toBe("price unknown: 1,300 tokens of m");
  });

  it("name the subtree's cost only when the descendants add to it", () => {
    const leaf: FrameCost = {
      own: summary(420_000, "complete"),
      subtree: summary(420_000, "complete"),
      models: [],
    };
    expect(costPhrase(leaf)).toBe("$0.42");
    expect(costPhrase({ ...leaf, subtree: summary(1_200_000, "complete", 3_000) })).toBe(
      "$0.42; $1.20 with its subtree",
    );
    expect(
      costPhrase({ ...leaf, own: summary(0, "none", 0), subtree: summary(1_200_000, "complete") }),
    ).toBe("nothing here; $1.20 with its subtree");
  });
});

describe("typed prices", () => {
  it("become whole micro-dollars, or nothing when they are not an amount", () => {
    expect(dollarsToMicros("3")).toBe(3_000_000);
    expect(dollarsToMicros(" $3.75 ")).toBe(3_750_000);
    expect(dollarsToMicros("0.075")).toBe(75_000);
    expect(dollarsToMicros(".5")).toBe(500_000);
    expect(dollarsToMicros("3.")).toBe(3_000_000);
    expect(dollarsToMicros("0.0000001")).toBeNull();
    for (const bad of ["", ".", "-1", "1e3", "three", "1.2.3"])
      expect(dollarsToMicros(bad)).toBeNull();
    expect(microsToDollars(75_000)).toBe("0.075");
    expect(microsToDollars(15_000_000)).toBe("15");
  });
});
