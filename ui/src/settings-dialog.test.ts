import { describe, expect, it } from "vitest";

import { providerEdit } from "./settings-dialog";

describe("a provider's key in the settings form", () => {
  it("keeps the saved key when the field is left empty", () => {
    expect(providerEdit({ baseUrl: "", keySet: true, newKey: "", remove: false })).toEqual({
      base_url: null,
      api_key: null,
    });
  });

  it("replaces it with a typed key, and removes it only when asked", () => {
    expect(providerEdit({ baseUrl: " http://localhost:11434/v1 ", keySet: true, newKey: "sk-new", remove: false })).toEqual({
      base_url: "http://localhost:11434/v1",
      api_key: "sk-new",
    });
    expect(providerEdit({ baseUrl: "", keySet: true, newKey: "sk-new", remove: true }).api_key).toBe("");
  });
});
