import { describe, expect, it } from "vitest";

import type { Settings_Serialize as Settings } from "../bindings";
import { configuredModels } from "./model-picker";

function settings(default_model: string | null, names: string[]): Settings {
  return {
    default_model,
    autonomy: "auto",
    approval: { read: "auto", change: "ask", run: "ask" },
    max_tool_rounds: 8,
    checkpoint_cap_mb: 2048,
    anthropic: { base_url: null, api_key: null },
    openai: { base_url: null, api_key: null },
    models: names.map((name) => ({
      name,
      provider: "openai",
      context_window: 8192,
      max_output_tokens: 1024,
    })),
  };
}

describe("the configured models", () => {
  it("puts the default first and lists each model once", () => {
    expect(configuredModels(settings("b", ["a", "b", "c", "a"]))).toEqual(["b", "a", "c"]);
  });

  it("lists the models alone without a default, and nothing without either", () => {
    expect(configuredModels(settings(null, ["a"]))).toEqual(["a"]);
    expect(configuredModels(settings("  ", []))).toEqual([]);
    expect(configuredModels(settings(null, []))).toEqual([]);
  });
});
