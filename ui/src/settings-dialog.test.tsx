import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { ApiError, Settings_Deserialize, Settings_Serialize as Settings } from "./bindings";
import { SettingsDialog, providerEdit } from "./settings-dialog";
import { answer, fakeBackend, settle } from "./test-backend";

describe("a provider's key in the settings form", () => {
  it("keeps the saved key when the field is left empty", () => {
    expect(providerEdit({ baseUrl: "", keySet: true, newKey: "", remove: false })).toEqual({
      base_url: null,
      api_key: null,
    });
  });

  it("replaces it with a typed key, and removes it only when asked", () => {
    expect(
      providerEdit({
        baseUrl: " http://localhost:11434/v1 ",
        keySet: true,
        newKey: "sk-new",
        remove: false,
      }),
    ).toEqual({
      base_url: "http://localhost:11434/v1",
      api_key: "sk-new",
    });
    expect(
      providerEdit({ baseUrl: "", keySet: true, newKey: "sk-new", remove: true }).api_key,
    ).toBe("");
  });
});

const SAVED: Settings = {
  default_model: "claude-sonnet-4-5",
  autonomy: "auto",
  max_tool_rounds: 8,
  anthropic: { base_url: null, api_key: "(set)" },
  openai: { base_url: null, api_key: null },
  models: [],
};

afterEach(() => {
  document.body.replaceChildren();
});

function setValue(element: HTMLInputElement | HTMLSelectElement | null, value: string) {
  if (element === null) throw new Error("no such field");
  element.value = value;
  element.dispatchEvent(new Event(element instanceof HTMLSelectElement ? "change" : "input"));
}

describe("the models list in the settings", () => {
  it("adds a model with its provider, window and reply, and saves it", async () => {
    const sent: Settings_Deserialize[] = [];
    const refusal: ApiError = { code: "invalid", message: "listed model 1 has no name" };
    const root = document.createElement("div");
    document.body.append(root);
    let closed = false;
    await act(async () => {
      render(
        <SettingsDialog
          backend={fakeBackend({
            getSettings: () => answer(SAVED),
            saveSettings: (settings) => {
              sent.push(settings);
              return answer<Settings>(settings.models?.[0]?.name === "" ? refusal : SAVED);
            },
          })}
          onClose={() => (closed = true)}
        />,
        root,
      );
      await settle();
    });
    // The dialog reads the settings in an effect, which runs when the first act ends.
    await act(settle);
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=add-model]")?.click();
      await settle();
    });
    const form = root.querySelector<HTMLFormElement>("[data-testid=settings-dialog]");
    const submit = async () =>
      act(async () => {
        form?.dispatchEvent(new Event("submit", { cancelable: true }));
        await settle();
      });
    // The backend refuses a nameless model; its reason is shown and nothing typed is lost.
    await submit();
    expect(form?.querySelector("[role=alert]")?.textContent).toBe(refusal.message);
    expect(closed).toBe(false);

    const row = root.querySelector("[data-testid=settings-model]");
    await act(async () => {
      setValue(row?.querySelector("input[name=model_name]") ?? null, "qwen2.5-coder:32b");
      setValue(row?.querySelector("input[name=model_context_window]") ?? null, "32768");
      setValue(row?.querySelector("input[name=model_max_output_tokens]") ?? null, "2048");
      await settle();
    });
    await submit();
    expect(sent.at(-1)?.models).toEqual([
      {
        name: "qwen2.5-coder:32b",
        provider: "openai",
        context_window: 32768,
        max_output_tokens: 2048,
      },
    ]);
    expect(sent.at(-1)?.anthropic?.api_key).toBeNull();
    expect(closed).toBe(true);
  });

  it("removes a listed model", async () => {
    const sent: Settings_Deserialize[] = [];
    const root = document.createElement("div");
    document.body.append(root);
    const listed = {
      name: "llama3.1:8b",
      provider: "openai" as const,
      context_window: 131072,
      max_output_tokens: 4096,
    };
    await act(async () => {
      render(
        <SettingsDialog
          backend={fakeBackend({
            getSettings: () => answer({ ...SAVED, models: [listed] }),
            saveSettings: (settings) => {
              sent.push(settings);
              return answer(SAVED);
            },
          })}
          onClose={() => undefined}
        />,
        root,
      );
      await settle();
    });
    await act(settle);
    await act(async () => {
      [...root.querySelectorAll("button")]
        .find((b) => b.getAttribute("aria-label") === "Remove llama3.1:8b")
        ?.click();
      await settle();
    });
    expect(root.querySelectorAll("[data-testid=settings-model]")).toHaveLength(0);
    await act(async () => {
      root
        .querySelector("[data-testid=settings-dialog]")
        ?.dispatchEvent(new Event("submit", { cancelable: true }));
      await settle();
    });
    expect(sent.at(-1)?.models).toEqual([]);
  });
});
