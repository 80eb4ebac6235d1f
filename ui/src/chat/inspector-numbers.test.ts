import { describe, expect, it } from "vitest";

import type {
  ContextReport_Serialize as ContextReport,
  OpeningReport_Serialize as OpeningReport,
} from "../bindings";
import { cacheSentence, formatPerMille, formatTokens, inspectorNumbers } from "./inspector-numbers";

const OPENING: OpeningReport = {
  generation: 1,
  reason: "entered",
  reason_text: "made when the conversation entered the frame",
  made_at: 0,
  made_now: false,
  tokens: 2_400,
  noted_frames: 0,
  newly_masked: 0,
  cache_read_tokens: 12_345,
  cache_written_tokens: 950,
  instructions: null,
};

const REPORT: ContextReport = {
  focus: "f0000000002",
  budget: 10_000,
  total_tokens: 3_200,
  fits: true,
  sections: [
    { kind: "preamble", frame: null, label: "preamble", tokens: 1_000, state: "full" },
    { kind: "ancestor", frame: "f0000000001", label: "Root", tokens: 400, state: "full" },
    { kind: "ancestor", frame: "f0000000002", label: "Design", tokens: 600, state: "full" },
    { kind: "sibling", frame: "f0000000003", label: "Build", tokens: 100, state: "title_only" },
    { kind: "child", frame: "f0000000004", label: "Sketch", tokens: 300, state: "compacted" },
    { kind: "relative", frame: "f0000000005", label: "Old", tokens: 900, state: "dropped" },
    { kind: "history", frame: "f0000000002", label: "messages", tokens: 800, state: "full" },
  ],
  omitted_messages: 2,
  linear_tokens: 41_000,
  masked_results: 0,
  masked_calls: 0,
  masked_tokens_saved: 0,
  opening: OPENING,
  cache_hit_per_mille: null,
};

describe("the context inspector's numbers", () => {
  it("adds up tokens per kind in document order, leaving out what was dropped", () => {
    const numbers = inspectorNumbers(REPORT);
    expect(numbers.stripes.map((s) => [s.kind, s.tokens])).toEqual([
      ["preamble", 1_000],
      ["ancestor", 1_000],
      ["sibling", 100],
      ["child", 300],
      ["history", 800],
    ]);
    expect(numbers.stripes.map((s) => s.percent)).toEqual([10, 10, 1, 3, 8]);
  });

  it("lists what was shrunk or left out", () => {
    expect(inspectorNumbers(REPORT).changed.map((s) => `${s.label}:${s.state}`)).toEqual([
      "Build:title_only",
      "Sketch:compacted",
      "Old:dropped",
    ]);
  });

  it("compares with the linear chat", () => {
    const numbers = inspectorNumbers(REPORT);
    expect(numbers.saved).toBe(37_800);
    expect(numbers.ratio).toBeCloseTo(12.8125);
    expect(formatTokens(numbers.total)).toBe("3.2k");
    expect(formatTokens(numbers.linear)).toBe("41k");
  });

  it("scales the bar to the total when the context is over budget", () => {
    const over = inspectorNumbers({ ...REPORT, budget: 1_000, total_tokens: 4_000, fits: false });
    expect(over.stripes[0]?.percent).toBe(25);
  });

  it("claims no saving when the linear chat is no bigger", () => {
    const small = inspectorNumbers({ ...REPORT, linear_tokens: 3_000 });
    expect(small.saved).toBe(0);
    expect(small.ratio).toBeNull();
  });

  it("formats token counts", () => {
    expect(formatTokens(950)).toBe("950");
    expect(formatTokens(1_000)).toBe("1k");
    expect(formatTokens(12_345)).toBe("12k");
    expect(formatTokens(1_250_000)).toBe("1.3M");
  });

  it("says what the next call does to the cache, naming only what it does", () => {
    expect(cacheSentence(OPENING)).toBe(
      "The next call reads about 12k tokens from the provider's cache and writes about 950.",
    );
    expect(cacheSentence({ ...OPENING, noted_frames: 1, newly_masked: 3 })).toBe(
      "The next call reads about 12k tokens from the provider's cache and writes about 950; appends a note on 1 frame that changed; masks 3 older tool results.",
    );
    expect(cacheSentence({ ...OPENING, noted_frames: 2 })).toContain(
      "; appends a note on 2 frames that changed.",
    );
  });

  it("writes a hit rate in thousandths as a percentage", () => {
    expect(formatPerMille(873)).toBe("87.3%");
    expect(formatPerMille(0)).toBe("0.0%");
    expect(formatPerMille(1_000)).toBe("100.0%");
  });
});
