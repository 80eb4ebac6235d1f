import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend } from "../backend";
import type {
  ListedModel_Serialize as ListedModel,
  ModelList_Serialize as ModelList,
  Settings_Serialize as Settings,
} from "../bindings";
import { answer, fakeBackend, settle } from "../test-backend";
import {
  ModelPicker,
  configuredModels,
  modelGroups,
  useModelChoice,
  windowLabel,
} from "./model-picker";

afterEach(() => {
  document.body.replaceChildren();
});

function named(default_model: string | null, names: string[]) {
  return {
    default_model,
    models: names.map((name) => ({
      name,
      provider: "openai" as const,
      context_window: 8192,
      max_output_tokens: 1024,
    })),
  };
}

const LLAMA = "local:127.0.0.1:8080/smollm2";
const OLLAMA = "local:127.0.0.1:11434/qwen2.5-coder:7b";

function listed(
  id: string,
  source: ListedModel["source"],
  context_window: number | null,
  name = id,
): ListedModel {
  return { id, name, source, context_window };
}

/** A list as the backend makes it: configured, a provider's, two local servers'. */
const LIST: ModelList = {
  models: [
    listed("claude-sonnet-4-5", { kind: "configured", provider: "anthropic" }, 200_000),
    listed("gpt-5-mini", { kind: "provider", provider: "openai" }, 400_000),
    listed(
      LLAMA,
      { kind: "local", address: "127.0.0.1:8080", server: "llama_cpp" },
      8192,
      "smollm2",
    ),
    listed(
      OLLAMA,
      { kind: "local", address: "127.0.0.1:11434", server: "ollama" },
      null,
      "qwen2.5-coder:7b",
    ),
  ],
  default_model: "claude-sonnet-4-5",
  providers: [],
  local_servers: [],
};

describe("the configured models", () => {
  it("puts the default first and lists each model once", () => {
    expect(configuredModels(named("b", ["a", "b", "c", "a"]))).toEqual(["b", "a", "c"]);
  });

  it("lists the models alone without a default, and nothing without either", () => {
    expect(configuredModels(named(null, ["a"]))).toEqual(["a"]);
    expect(configuredModels(named("  ", []))).toEqual([]);
    expect(configuredModels(named(null, []))).toEqual([]);
  });
});

describe("the picker's groups", () => {
  it("groups the list by source, configured first, each model once with its window", () => {
    const groups = modelGroups(["claude-sonnet-4-5", "gpt-5-mini"], LIST);
    expect(groups.map((g) => g.label)).toEqual([
      "Settings",
      "llama.cpp at 127.0.0.1:8080",
      "Ollama at 127.0.0.1:11434",
    ]);
    expect(groups[0]?.models).toEqual([
      { id: "claude-sonnet-4-5", name: "claude-sonnet-4-5", contextWindow: 200_000 },
      { id: "gpt-5-mini", name: "gpt-5-mini", contextWindow: 400_000 },
    ]);
    expect(groups[1]?.models).toEqual([{ id: LLAMA, name: "smollm2", contextWindow: 8192 }]);
  });

  it("shows a configured local model under its server while the server lists it", () => {
    const groups = modelGroups([LLAMA, "claude-sonnet-4-5"], LIST);
    expect(groups[0]?.models.map((m) => m.id)).toEqual(["claude-sonnet-4-5"]);
    expect(groups.find((g) => g.key === "local:127.0.0.1:8080")?.models[0]?.id).toBe(LLAMA);
    // Without the list, it is a configured model like any other.
    expect(modelGroups([LLAMA], null)).toEqual([
      {
        key: "settings",
        label: "Settings",
        models: [{ id: LLAMA, name: LLAMA, contextWindow: null }],
      },
    ]);
  });

  it("writes windows in a few characters", () => {
    expect([8192, 131_072, 200_000, 1_047_576, 2_000_000, 500].map(windowLabel)).toEqual([
      "8k",
      "128k",
      "200k",
      "1M",
      "2M",
      "500",
    ]);
  });
});

function Harness({ backend }: { backend: Backend }) {
  const choice = useModelChoice(backend);
  return (
    <div>
      <ModelPicker choice={choice} onOpenSettings={() => undefined} />
      <output data-testid="chosen">{choice.chosen}</output>
    </div>
  );
}

async function mount(backend: Backend): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(<Harness backend={backend} />, root);
    await settle();
  });
  return root;
}

function picker(root: HTMLElement): HTMLSelectElement {
  const select = root.querySelector<HTMLSelectElement>("[data-testid=model-picker]");
  if (select === null) throw new Error("no model picker");
  return select;
}

function shown(root: HTMLElement): [string, string[]][] {
  return [...picker(root).querySelectorAll("optgroup")].map((group) => [
    group.label,
    [...group.querySelectorAll("option")].map((o) => o.textContent ?? ""),
  ]);
}

const SETTINGS = { ...named("claude-sonnet-4-5", []) } as unknown as Settings;

describe("the grouped model picker", () => {
  it("offers the list by server and source, with windows, the default chosen", async () => {
    let lists = 0;
    const root = await mount(
      fakeBackend({
        getSettings: () => answer(SETTINGS),
        listModels: () => {
          lists += 1;
          return answer(LIST);
        },
      }),
    );
    expect(shown(root)).toEqual([
      ["Settings", ["claude-sonnet-4-5 · 200k"]],
      ["OpenAI's models", ["gpt-5-mini · 400k"]],
      ["llama.cpp at 127.0.0.1:8080", ["smollm2 · 8k"]],
      ["Ollama at 127.0.0.1:11434", ["qwen2.5-coder:7b"]],
    ]);
    const llama = [...picker(root).options].find((o) => o.value === LLAMA);
    expect(llama?.title).toBe(`${LLAMA} (8,192 tokens of context)`);
    expect(picker(root).value).toBe("claude-sonnet-4-5");
    expect(lists).toBe(1);
  });

  it("looks again when the picker is opened, and offers a server found since", async () => {
    let list: ModelList = { ...LIST, models: LIST.models.slice(0, 1) };
    let lists = 0;
    const root = await mount(
      fakeBackend({
        getSettings: () => answer(SETTINGS),
        listModels: () => {
          lists += 1;
          return answer(list);
        },
      }),
    );
    expect([...picker(root).options].map((o) => o.value)).toEqual(["claude-sonnet-4-5"]);
    list = LIST;
    await act(async () => {
      picker(root).dispatchEvent(new MouseEvent("mousedown", { bubbles: true }));
      // A press focuses the select too; the two ask once.
      picker(root).dispatchEvent(new FocusEvent("focus"));
      await settle();
    });
    expect(lists).toBe(2);
    expect(shown(root).map(([label]) => label)).toContain("llama.cpp at 127.0.0.1:8080");
    await act(async () => {
      picker(root).value = LLAMA;
      picker(root).dispatchEvent(new Event("change"));
      await settle();
    });
    expect(root.querySelector("[data-testid=chosen]")?.textContent).toBe(LLAMA);
  });

  it("chooses a local model for a person who configured none", async () => {
    const local: ModelList = { ...LIST, default_model: null, models: LIST.models.slice(2, 3) };
    const root = await mount(
      fakeBackend({
        getSettings: () => answer({ ...SETTINGS, default_model: null }),
        listModels: () => answer(local),
      }),
    );
    expect(picker(root).value).toBe(LLAMA);
    expect(root.querySelector("[data-testid=chosen]")?.textContent).toBe(LLAMA);
    expect(root.querySelector("optgroup")).toBeNull();
  });

  it("offers the settings' models when the list cannot be had", async () => {
    const root = await mount(
      fakeBackend({ getSettings: () => answer({ ...SETTINGS, ...named("a", ["b"]) }) }),
    );
    expect([...picker(root).options].map((o) => o.textContent)).toEqual(["a", "b"]);
    expect(root.querySelector("optgroup")).toBeNull();
  });
});
