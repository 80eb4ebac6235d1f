import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { ApiError, Settings_Deserialize, Settings_Serialize as Settings } from "./bindings";
import { formatMiB } from "./settings-checkpoints";
import { SettingsDialog } from "./settings-dialog";
import {
  type ProviderForm,
  isInsecureHttp,
  movesHost,
  needsNewKey,
  providerEdit,
} from "./settings-providers";
import { DEFAULT_APPROVAL, GATEWAY_OFF, answer, fakeBackend, settle } from "./test-backend";

const FORM: ProviderForm = {
  baseUrl: "",
  savedUrl: "",
  keySet: true,
  newKey: "",
  remove: false,
  allowHttp: false,
  location: null,
};

describe("a provider's key in the settings form", () => {
  it("keeps the saved key when the field is left empty", () => {
    expect(providerEdit(FORM)).toEqual({
      base_url: null,
      api_key: null,
      allow_insecure_http: false,
    });
  });

  it("replaces it with a typed key, and removes it only when asked", () => {
    expect(
      providerEdit({ ...FORM, baseUrl: " http://localhost:11434/v1 ", newKey: "sk-new" }),
    ).toEqual({
      base_url: "http://localhost:11434/v1",
      api_key: "sk-new",
      allow_insecure_http: false,
    });
    expect(providerEdit({ ...FORM, newKey: "sk-new", remove: true }).api_key).toBe("");
  });

  it("asks for the key again when the base URL moves to another host", () => {
    const openai = "https://api.openai.com/v1";
    const at = (baseUrl: string, savedUrl = "") => ({ ...FORM, baseUrl, savedUrl });
    expect(movesHost(at("https://API.openai.com:443/v2"), openai)).toBe(false);
    expect(movesHost(at("", "https://api.openai.com/other"), openai)).toBe(false);
    for (const url of [
      "https://evil.example.net/v1",
      "http://api.openai.com/v1",
      "https://api.openai.com:8443/v1",
    ]) {
      expect(movesHost(at(url), openai)).toBe(true);
      expect(needsNewKey(at(url), openai)).toBe(true);
      expect(needsNewKey({ ...at(url), newKey: "sk-for-there" }, openai)).toBe(false);
      expect(needsNewKey({ ...at(url), remove: true }, openai)).toBe(false);
      expect(needsNewKey({ ...at(url), keySet: false }, openai)).toBe(false);
    }
  });

  it("tells plain http:// to another computer from a local server", () => {
    for (const local of [
      "http://127.0.0.1:11434/v1",
      "http://127.8.9.10/v1",
      "http://localhost:8080",
      "http://[::1]:8000/v1",
      "https://models.example.com/v1",
    ]) {
      expect(isInsecureHttp(local)).toBe(false);
    }
    for (const remote of ["http://192.168.1.20:11434/v1", "http://models.example.com/v1"]) {
      expect(isInsecureHttp(remote)).toBe(true);
    }
    // The confirmation is sent only for such a URL.
    expect(providerEdit({ ...FORM, baseUrl: "https://x.example", allowHttp: true })).toEqual(
      expect.objectContaining({ allow_insecure_http: false }),
    );
  });
});

const SAVED: Settings = {
  default_model: "claude-sonnet-4-5",
  autonomy: "auto",
  approval: DEFAULT_APPROVAL,
  turn_budget: { micro_usd: 10_000_000, tokens: null, tool_calls: 250 },
  keep_tool_results: 3,
  project_instructions: true,
  checkpoint_cap_mb: 2048,
  gateway: GATEWAY_OFF.settings,
  anthropic: {
    base_url: null,
    api_key: "(set)",
    key_location: { kind: "file", path: "/home/someone/.config/flame/settings.json" },
  },
  openai: {
    base_url: null,
    api_key: null,
    key_location: { kind: "environment", variable: "OPENAI_API_KEY" },
  },
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

/** Renders the dialog over `backend` and waits for the settings to be read. */
async function openDialog(parts: Parameters<typeof fakeBackend>[0], onClose = () => undefined) {
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(<SettingsDialog backend={fakeBackend(parts)} onClose={onClose} />, root);
    await settle();
  });
  // The dialog reads the settings in an effect, which runs when the first act ends.
  await act(settle);
  const form = root.querySelector<HTMLFormElement>("[data-testid=settings-dialog]");
  const submit = async () =>
    act(async () => {
      form?.dispatchEvent(new Event("submit", { cancelable: true }));
      await settle();
    });
  const type = async (selector: string, value: string) =>
    act(async () => {
      setValue(root.querySelector<HTMLInputElement>(selector), value);
      await settle();
    });
  return { root, form, submit, type };
}

describe("where keys go in the settings", () => {
  it("says where each provider's key is kept", async () => {
    const { root } = await openDialog({ getSettings: () => answer(SAVED) });
    expect(root.querySelector("[data-testid=anthropic_key_location]")?.textContent).toBe(
      "Kept in /home/someone/.config/flame/settings.json, readable only by you (no system keyring answered).",
    );
    expect(root.querySelector("[data-testid=openai_key_location]")?.textContent).toContain(
      "Taken from OPENAI_API_KEY",
    );
  });

  it("asks for the key again when a base URL moves to another host", async () => {
    const sent: Settings_Deserialize[] = [];
    const { root, form, submit, type } = await openDialog({
      getSettings: () => answer(SAVED),
      saveSettings: (settings) => {
        sent.push(settings);
        return answer(SAVED);
      },
    });
    expect(root.querySelector("[data-testid=anthropic_key_asked_again]")).toBeNull();
    await type("input[name=anthropic_base_url]", "https://proxy.example.net");
    expect(root.querySelector("[data-testid=anthropic_key_asked_again]")?.textContent).toContain(
      "The key will be asked again for the new host",
    );
    // Saving without the new host's key is held back: the saved key is not for that host.
    await submit();
    expect(sent).toHaveLength(0);
    expect(form?.querySelector("[role=alert]")?.textContent).toContain("enter the key for it");
    await type("input[name=anthropic_api_key]", "sk-ant-for-the-proxy");
    await submit();
    expect(sent.at(-1)?.anthropic).toEqual({
      base_url: "https://proxy.example.net",
      api_key: "sk-ant-for-the-proxy",
      allow_insecure_http: false,
    });
  });

  it("asks before sending a key over plain http:// to another computer", async () => {
    const sent: Settings_Deserialize[] = [];
    const { root, submit, type } = await openDialog({
      getSettings: () => answer(SAVED),
      saveSettings: (settings) => {
        sent.push(settings);
        return answer(SAVED);
      },
    });
    await type("input[name=openai_base_url]", "http://127.0.0.1:11434/v1");
    expect(root.querySelector("input[name=openai_allow_insecure_http]")).toBeNull();
    await type("input[name=openai_base_url]", "http://gpu-box.lan:8000/v1");
    const confirm = root.querySelector<HTMLInputElement>("input[name=openai_allow_insecure_http]");
    expect(confirm?.parentElement?.textContent).toContain("unencrypted");
    expect(confirm?.checked).toBe(false);
    await act(async () => {
      confirm?.click();
      await settle();
    });
    await submit();
    expect(sent.at(-1)?.openai).toEqual({
      base_url: "http://gpu-box.lan:8000/v1",
      api_key: null,
      allow_insecure_http: true,
    });
  });
});

describe("the approval policy in the settings", () => {
  it("shows a row per kind of workspace tool with the saved choice, and saves a change", async () => {
    const sent: Settings_Deserialize[] = [];
    const { root, submit, type } = await openDialog({
      getSettings: () => answer(SAVED),
      saveSettings: (settings) => {
        sent.push(settings);
        return answer(SAVED);
      },
    });
    const rows = [...root.querySelectorAll("[data-testid=approval-row]")];
    expect(rows.map((row) => row.querySelector("span")?.firstChild?.textContent?.trim())).toEqual([
      "Reading",
      "Changing files",
      "Running commands",
    ]);
    const chosen = rows.map((row) => row.querySelector("select")?.value);
    expect(chosen).toEqual(["auto", "ask", "ask"]);
    expect(
      [...(rows[0]?.querySelectorAll("option") ?? [])].map((option) => option.textContent),
    ).toEqual(["Automatic", "Ask"]);
    await type("select[name=approval_change]", "auto");
    await type("select[name=approval_read]", "ask");
    await submit();
    expect(sent.at(-1)?.approval).toEqual({ read: "ask", change: "auto", run: "ask" });
  });

  it("offers commands a third level, automatic in the sandbox, and saves it", async () => {
    const sent: Settings_Deserialize[] = [];
    const { root, submit, type } = await openDialog({
      getSettings: () => answer(SAVED),
      saveSettings: (settings) => {
        sent.push(settings);
        return answer(SAVED);
      },
    });
    const run = root.querySelector("select[name=approval_run]");
    expect([...(run?.querySelectorAll("option") ?? [])].map((option) => option.value)).toEqual([
      "auto",
      "auto_in_sandbox",
      "ask",
    ]);
    expect(run?.querySelector("option[value=auto_in_sandbox]")?.textContent).toBe(
      "Automatic in the sandbox",
    );
    await type("select[name=approval_run]", "auto_in_sandbox");
    await submit();
    expect(sent.at(-1)?.approval).toEqual({ read: "auto", change: "ask", run: "auto_in_sandbox" });
  });
});

describe("observation masking in the settings", () => {
  it("edits how many newest tool results are sent in full", async () => {
    const sent: Settings_Deserialize[] = [];
    const { root, submit, type } = await openDialog({
      getSettings: () => answer(SAVED),
      saveSettings: (settings) => {
        sent.push(settings);
        return answer(SAVED);
      },
    });
    const keep = root.querySelector<HTMLInputElement>("input[name=keep_tool_results]");
    expect(keep?.value).toBe("3");
    expect(keep?.closest("label")?.textContent).toContain("Newest tool results sent in full");
    await type("input[name=keep_tool_results]", "6");
    await submit();
    expect(sent.at(-1)?.keep_tool_results).toBe(6);
  });
});

describe("project instructions in the settings", () => {
  it("shows them on as saved, and saves them turned off", async () => {
    const sent: Settings_Deserialize[] = [];
    const { root, submit } = await openDialog({
      getSettings: () => answer(SAVED),
      saveSettings: (settings) => {
        sent.push(settings);
        return answer(SAVED);
      },
    });
    const box = root.querySelector<HTMLInputElement>("input[name=project_instructions]");
    if (box === null) throw new Error("no project instructions checkbox");
    expect(box.checked).toBe(true);
    expect(box.closest("label")?.textContent).toContain(
      "Read project instructions (AGENTS.md, CLAUDE.md)",
    );
    await act(async () => {
      box.click();
      await settle();
    });
    await submit();
    expect(sent.at(-1)?.project_instructions).toBe(false);
  });
});

describe("the per-turn budget in the settings", () => {
  it("shows it, and saves tool calls as a number, dollars as micro-dollars and empty as none", async () => {
    const sent: Settings_Deserialize[] = [];
    const { root, submit, type } = await openDialog({
      getSettings: () => answer(SAVED),
      saveSettings: (settings) => {
        sent.push(settings);
        return answer(SAVED);
      },
    });
    const calls = root.querySelector<HTMLInputElement>("input[name=turn_budget_tool_calls]");
    const usd = root.querySelector<HTMLInputElement>("input[name=turn_budget_usd]");
    expect([calls?.value, usd?.value]).toEqual(["250", "10"]);
    await type("input[name=turn_budget_tool_calls]", "400");
    await type("input[name=turn_budget_usd]", "2.5");
    await submit();
    expect(sent.at(-1)?.turn_budget).toEqual({
      micro_usd: 2_500_000,
      tokens: null,
      tool_calls: 400,
    });
    await type("input[name=turn_budget_usd]", "");
    await submit();
    expect(sent.at(-1)?.turn_budget?.micro_usd).toBeNull();
  });
});

describe("checkpoints in the settings", () => {
  it("edits the storage cap and saves it", async () => {
    const sent: Settings_Deserialize[] = [];
    const { root, submit, type } = await openDialog({
      getSettings: () => answer(SAVED),
      saveSettings: (settings) => {
        sent.push(settings);
        return answer(SAVED);
      },
    });
    const cap = root.querySelector<HTMLInputElement>("input[name=checkpoint_cap_mb]");
    expect(cap?.value).toBe("2048");
    expect(cap?.closest("label")?.textContent).toContain("Checkpoint storage cap (MiB)");
    await type("input[name=checkpoint_cap_mb]", "512");
    await submit();
    expect(sent.at(-1)?.checkpoint_cap_mb).toBe(512);
  });

  it("lists what each workspace's checkpoints take now", async () => {
    const { root } = await openDialog({
      getSettings: () => answer(SAVED),
      checkpointStorage: () =>
        answer([
          { workspace: "/home/someone/site", bytes: 3 * 1024 * 1024, checkpoints: 12 },
          { workspace: "/home/someone/tool", bytes: 1536 * 1024 * 1024, checkpoints: 1 },
        ]),
    });
    const rows = [...root.querySelectorAll<HTMLElement>("[data-testid=checkpoint-storage] li")];
    expect(rows.map((row) => row.textContent)).toEqual([
      "/home/someone/site 3.0 MiB, 12 checkpoints",
      "/home/someone/tool 1,536 MiB, 1 checkpoint",
    ]);
    expect(root.querySelector("[data-testid=checkpoint-storage-empty]")).toBeNull();
  });

  it("says when there are no checkpoints yet, and shows a failed measure", async () => {
    const empty = await openDialog({ getSettings: () => answer(SAVED) });
    expect(empty.root.querySelector("[data-testid=checkpoint-storage-empty]")?.textContent).toBe(
      "No checkpoints yet.",
    );
    document.body.replaceChildren();
    const failed = await openDialog({
      getSettings: () => answer(SAVED),
      checkpointStorage: () =>
        answer<never>({ code: "internal", message: "could not measure checkpoints" }),
    });
    expect(
      failed.root.querySelector("[data-testid=settings-checkpoints] [role=alert]")?.textContent,
    ).toBe("could not measure checkpoints");
  });

  it("writes sizes in MiB", () => {
    expect(formatMiB(0)).toBe("0.0 MiB");
    expect(formatMiB(1024 * 1024 * 2048)).toBe("2,048 MiB");
  });
});
