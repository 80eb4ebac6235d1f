import { describe, expect, it } from "vitest";

import type { FrameCost_Serialize as FrameCost } from "./bindings";
import { costPhrase, describeCost, dollarsToMicros, formatUsd, microsToDollars } from "./cost-text";
import { summary } from "./test-costs";

describe("amounts", () => {
  it("read as dollars, by the backend's rule", () => {
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(1)).toBe("<$0.0001");
    expect(formatUsd(100)).toBe("$0.0001");
    expect(formatUsd(3_149)).toBe("$0.0031");
    expect(formatUsd(3_150)).toBe("$0.0032");
    expect(formatUsd(9_999)).toBe("$0.0100");
    expect(formatUsd(10_000)).toBe("$0.01");
    expect(formatUsd(424_999)).toBe("$0.42");
    expect(formatUsd(22_050_000)).toBe("$22.05");
  });

  it("say what they cover", () => {
    expect(describeCost(summary(0, "none", 0))).toBe("nothing recorded");
    expect(describeCost(summary(420_000, "complete"))).toBe("$0.42");
    const llama = { model: "llama3.1:8b", tokens: 1_234 };
    expect(describeCost(summary(420_000, "partial", 2_000, llama))).toBe(
      "$0.42 + 1,234 tokens of llama3.1:8b at an unknown price",
    );
    expect(describeCost(summary(0, "unknown", 1_234, llama))).toBe(
      "price unknown: 1,234 tokens of llama3.1:8b",
    );
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
