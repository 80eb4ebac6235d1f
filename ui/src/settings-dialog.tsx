// Model settings: where each provider is, its key, the default model, autonomy, the per-turn
// budget and the approval of workspace tools (per kind: automatic, or asked each time). Keys are never shown: the backend answers "(set)" for a saved key, the field stays empty
// with that placeholder, and an untouched field keeps the saved key (null is sent). A key is
// removed only by ticking "Remove", which sends "". Each provider says where its key is kept (the
// system keyring, the settings file, or an environment variable). A base URL moved to another
// host asks for the key again (the backend drops the saved one: a key only goes where it was
// given), and plain http:// to another computer needs the person's confirmation. Below the
// approval sits the cap on the storage workspace checkpoints take, with what each workspace's
// checkpoints take now.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "./backend";
import type {
  ApiError,
  Approval,
  ApprovalPolicy_Serialize as ApprovalPolicy,
  Autonomy,
  CheckpointStorage,
  KeyLocation,
  ModelSettings,
  ProviderKind,
  ProviderSettings_Deserialize as ProviderEdit,
  Settings_Serialize as Settings,
} from "./bindings";
import { dollarLimitOf, limitOf } from "./budget-text";
import { microsToDollars } from "./cost-text";
import { ErrorLine } from "./error-line";
import { PricesSection } from "./settings-prices";
import { SettingsServers } from "./settings-servers";

const PROVIDERS = [
  { id: "anthropic", label: "Anthropic", defaultUrl: "https://api.anthropic.com" },
  { id: "openai", label: "OpenAI or compatible", defaultUrl: "https://api.openai.com/v1" },
] as const;

type ProviderId = (typeof PROVIDERS)[number]["id"];

export interface ProviderForm {
  baseUrl: string;
  /** The base URL as saved, to tell when the key would go to another host. */
  savedUrl: string;
  keySet: boolean;
  newKey: string;
  remove: boolean;
  /** The person confirmed plain http:// to another computer. */
  allowHttp: boolean;
  location: KeyLocation | null;
}

/** Where requests to `url` (empty: `fallback`) go — scheme, host and port — or null if it is no URL. */
export function origin(url: string, fallback: string): string | null {
  try {
    return new URL(url.trim() === "" ? fallback : url.trim()).origin;
  } catch {
    return null;
  }
}

/** The host of `url`, for messages; the text itself when it is no URL. */
function hostOf(url: string): string {
  try {
    return new URL(url.trim()).host;
  } catch {
    return url;
  }
}

/** Whether the form's base URL sends the key to another host than the saved one did. */
export function movesHost(form: ProviderForm, defaultUrl: string): boolean {
  return origin(form.baseUrl, defaultUrl) !== origin(form.savedUrl, defaultUrl);
}

/** Whether `url` is plain http:// to a host other than this computer (localhost, 127/8, ::1). */
export function isInsecureHttp(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return false;
  }
  if (parsed.protocol !== "http:") return false;
  const host = parsed.hostname.toLowerCase();
  return !(host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host));
}

/** What to send for one provider, from the form. */
export function providerEdit(form: ProviderForm): ProviderEdit {
  return {
    base_url: form.baseUrl.trim() === "" ? null : form.baseUrl.trim(),
    api_key: form.remove ? "" : form.newKey === "" ? null : form.newKey,
    allow_insecure_http: form.allowHttp && isInsecureHttp(form.baseUrl),
  };
}

/** Whether saving must wait for a key: the saved one would not go to the new host. */
export function needsNewKey(form: ProviderForm, defaultUrl: string): boolean {
  return form.keySet && !form.remove && form.newKey === "" && movesHost(form, defaultUrl);
}

/** Where a provider's key is, in words. */
export function keyLocationText(location: KeyLocation | null): string {
  if (location === null) return "";
  switch (location.kind) {
    case "keyring":
      return "Kept in the system keyring.";
    case "file":
      return `Kept in ${location.path}, readable only by you (no system keyring answered).`;
    case "environment":
      return `Taken from ${location.variable}, which is used before a key saved here.`;
  }
}

/** The approval policy's rows: the kind of workspace tool each governs, in words. */
export const APPROVAL_ROWS: { kind: keyof ApprovalPolicy; label: string; tools: string }[] = [
  { kind: "read", label: "Reading", tools: "read, list and search files" },
  { kind: "change", label: "Changing files", tools: "write and edit files" },
  { kind: "run", label: "Running commands", tools: "run shell commands" },
];

/** A size in bytes as mebibytes, the unit the checkpoint cap is set in. */
export function formatMiB(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return `${mib < 10 ? mib.toFixed(1) : Math.round(mib).toLocaleString("en-US")} MiB`;
}

/** What each workspace's checkpoints take now, as the backend measured them. */
function CheckpointStorageList({ storage }: { storage: CheckpointStorage[] | ApiError | null }) {
  if (storage === null) return <p class="muted">Measuring the checkpoints…</p>;
  if (!Array.isArray(storage)) return <ErrorLine error={storage} />;
  if (storage.length === 0)
    return (
      <p class="muted" data-testid="checkpoint-storage-empty">
        No checkpoints yet.
      </p>
    );
  return (
    <ul class="checkpoint-storage" data-testid="checkpoint-storage" aria-label="Checkpoint storage">
      {storage.map((entry) => (
        <li key={entry.workspace} data-workspace={entry.workspace}>
          <code>{entry.workspace}</code>{" "}
          <span class="muted">
            {formatMiB(entry.bytes)}, {entry.checkpoints.toLocaleString("en-US")}{" "}
            {entry.checkpoints === 1 ? "checkpoint" : "checkpoints"}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** A new row of the models list: an OpenAI-compatible server's model, with a common window. */
export const NEW_MODEL: ModelSettings = {
  name: "",
  provider: "openai",
  context_window: 128_000,
  max_output_tokens: 4_096,
};

export function SettingsDialog({
  backend,
  onSaved,
  onClose,
}: {
  backend: Backend;
  /** Told the settings as saved (keys redacted), so what depends on them can follow. */
  onSaved?: (settings: Settings) => void;
  onClose: () => void;
}) {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [providers, setProviders] = useState<Record<ProviderId, ProviderForm> | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [storage, setStorage] = useState<CheckpointStorage[] | ApiError | null>(null);

  const show = (loaded: Settings) => {
    setSettings(loaded);
    const form = (id: ProviderId): ProviderForm => ({
      baseUrl: loaded[id].base_url ?? "",
      savedUrl: loaded[id].base_url ?? "",
      keySet: loaded[id].api_key !== null,
      newKey: "",
      remove: false,
      allowHttp: loaded[id].allow_insecure_http === true,
      location: loaded[id].key_location ?? null,
    });
    setProviders({ anthropic: form("anthropic"), openai: form("openai") });
  };

  useEffect(() => {
    void backend.getSettings().then((answer) => {
      if (answer.status === "ok") show(answer.data);
      else setError(answer.error);
    });
    void backend
      .checkpointStorage()
      .then((answer) => setStorage(answer.status === "ok" ? answer.data : answer.error));
  }, [backend]);

  // From the current state, so edits that arrive before a render all count.
  const editModels = (change: (models: ModelSettings[]) => ModelSettings[]) =>
    setSettings((current) => (current ? { ...current, models: change(current.models) } : current));

  const editProvider = (id: ProviderId, change: Partial<ProviderForm>) =>
    setProviders((current) =>
      current ? { ...current, [id]: { ...current[id], ...change } } : current,
    );

  const save = async (event: Event) => {
    event.preventDefault();
    if (settings === null || providers === null) return;
    const unkeyed = PROVIDERS.find((p) => needsNewKey(providers[p.id], p.defaultUrl));
    if (unkeyed !== undefined) {
      setError({
        code: "invalid",
        message: `the ${unkeyed.label} base URL moved to another host: enter the key for it, or tick "Remove the saved key"`,
      });
      return;
    }
    setBusy(true);
    const answer = await backend.saveSettings({
      ...settings,
      default_model: settings.default_model?.trim() ? settings.default_model.trim() : null,
      anthropic: providerEdit(providers.anthropic),
      openai: providerEdit(providers.openai),
    });
    setBusy(false);
    if (answer.status === "ok") {
      onSaved?.(answer.data);
      onClose();
    } else setError(answer.error);
  };

  return (
    <div class="dialog-backdrop" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <form
        class="dialog settings-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="settings-heading"
        data-testid="settings-dialog"
        onSubmit={(e) => void save(e)}
      >
        <h2 id="settings-heading">Model settings</h2>
        {settings === null && error === null && <p class="muted">Reading the settings…</p>}
        {settings !== null && providers !== null && (
          <>
            <label>
              Default model
              <input
                name="default_model"
                list="known-models"
                value={settings.default_model ?? ""}
                placeholder="for example claude-sonnet-4-5 or gpt-4o"
                onInput={(e) => setSettings({ ...settings, default_model: e.currentTarget.value })}
              />
              <datalist id="known-models">
                {settings.models.map((m) => (
                  <option key={m.name} value={m.name} />
                ))}
              </datalist>
            </label>
            <label>
              Autonomy
              <select
                name="autonomy"
                value={settings.autonomy}
                onChange={(e) =>
                  setSettings({ ...settings, autonomy: e.currentTarget.value as Autonomy })
                }
              >
                <option value="auto">auto: the agent pushes and pops on its own</option>
                <option value="ask">ask: each push or pop waits for you</option>
              </select>
            </label>
            <label>
              Tool calls per message (empty: no limit)
              <input
                name="turn_budget_tool_calls"
                type="number"
                min={1}
                value={settings.turn_budget.tool_calls ?? ""}
                onInput={(e) =>
                  setSettings({
                    ...settings,
                    turn_budget: {
                      ...settings.turn_budget,
                      tool_calls: limitOf(e.currentTarget.value),
                    },
                  })
                }
              />
            </label>
            <label>
              Dollars per message, where the model's price is known (empty: no limit)
              <input
                name="turn_budget_usd"
                type="number"
                min={0.01}
                step={0.01}
                value={
                  settings.turn_budget.micro_usd === null
                    ? ""
                    : microsToDollars(settings.turn_budget.micro_usd)
                }
                onInput={(e) =>
                  setSettings({
                    ...settings,
                    turn_budget: {
                      ...settings.turn_budget,
                      micro_usd: dollarLimitOf(e.currentTarget.value),
                    },
                  })
                }
              />
            </label>
            <label>
              Newest tool results sent in full
              <input
                name="keep_tool_results"
                type="number"
                min={1}
                value={settings.keep_tool_results}
                onInput={(e) =>
                  setSettings({ ...settings, keep_tool_results: Number(e.currentTarget.value) })
                }
              />
              <span class="muted">
                Older results in a frame are sent as one-line stubs the model can read back.
              </span>
            </label>
            <fieldset class="approval-policy" data-testid="settings-approval">
              <legend>Workspace tools</legend>
              <p class="muted">
                Whether the agent's calls of each kind run at once or wait for you. A prompt can
                also allow the rest of a tree's calls of its kind.
              </p>
              {APPROVAL_ROWS.map((row) => (
                <label key={row.kind} class="approval-row" data-testid="approval-row">
                  <span>
                    {row.label} <span class="muted">({row.tools})</span>
                  </span>
                  <select
                    name={`approval_${row.kind}`}
                    value={settings.approval[row.kind]}
                    onChange={(e) =>
                      setSettings({
                        ...settings,
                        approval: {
                          ...settings.approval,
                          [row.kind]: e.currentTarget.value as Approval,
                        },
                      })
                    }
                  >
                    <option value="auto">Automatic</option>
                    <option value="ask">Ask</option>
                  </select>
                </label>
              ))}
            </fieldset>
            <fieldset class="checkpoints" data-testid="settings-checkpoints">
              <legend>Checkpoints</legend>
              <p class="muted">
                Flame snapshots a tree's workspace when a frame starts and around each change, so a
                frame's changes can be shown and rolled back. Past the cap, the oldest snapshots of
                a workspace are removed.
              </p>
              <label>
                Checkpoint storage cap (MiB)
                <input
                  name="checkpoint_cap_mb"
                  type="number"
                  min={1}
                  max={1_048_576}
                  value={settings.checkpoint_cap_mb}
                  onInput={(e) =>
                    setSettings({ ...settings, checkpoint_cap_mb: Number(e.currentTarget.value) })
                  }
                />
              </label>
              <CheckpointStorageList storage={storage} />
            </fieldset>
            <PricesSection
              settings={settings}
              onChange={(edit) =>
                setSettings((s) => (s ? { ...s, prices: edit(s.prices ?? []) } : s))
              }
            />
            <fieldset class="models" data-testid="settings-models">
              <legend>Models</legend>
              <p class="muted">
                Models besides the ones Flame knows by name (Claude, GPT), or overriding them: local
                servers' models, for example, with their context windows.
              </p>
              {settings.models.map((model, i) => {
                const edit = (change: Partial<ModelSettings>) =>
                  editModels((models) => models.map((m, j) => (j === i ? { ...m, ...change } : m)));
                return (
                  <div class="model-row" key={i} data-testid="settings-model">
                    <div class="model-line">
                      <input
                        name="model_name"
                        aria-label="Name"
                        value={model.name}
                        placeholder="name, for example llama3.1:8b"
                        onInput={(e) => edit({ name: e.currentTarget.value })}
                      />
                      <select
                        name="model_provider"
                        aria-label="Provider"
                        value={model.provider}
                        onChange={(e) => edit({ provider: e.currentTarget.value as ProviderKind })}
                      >
                        {PROVIDERS.map((p) => (
                          <option key={p.id} value={p.id}>
                            {p.label}
                          </option>
                        ))}
                      </select>
                      <button
                        type="button"
                        aria-label={`Remove ${model.name || "this model"}`}
                        onClick={() => editModels((models) => models.filter((_, j) => j !== i))}
                      >
                        ×
                      </button>
                    </div>
                    <div class="model-line">
                      <label>
                        Context window
                        <input
                          name="model_context_window"
                          type="number"
                          min={1}
                          value={model.context_window}
                          onInput={(e) => edit({ context_window: Number(e.currentTarget.value) })}
                        />
                      </label>
                      <label>
                        Longest reply
                        <input
                          name="model_max_output_tokens"
                          type="number"
                          min={1}
                          value={model.max_output_tokens}
                          onInput={(e) =>
                            edit({ max_output_tokens: Number(e.currentTarget.value) })
                          }
                        />
                      </label>
                      <span class="muted">tokens</span>
                    </div>
                  </div>
                );
              })}
              <button
                type="button"
                data-testid="add-model"
                onClick={() => editModels((models) => [...models, NEW_MODEL])}
              >
                Add a model
              </button>
            </fieldset>
            <SettingsServers
              backend={backend}
              settings={settings}
              onChange={(local_servers) =>
                setSettings((current) => current && { ...current, local_servers })
              }
            />
            {PROVIDERS.map((provider) => {
              const form = providers[provider.id];
              const moved = form.keySet && movesHost(form, provider.defaultUrl);
              const insecure = isInsecureHttp(form.baseUrl);
              return (
                <fieldset key={provider.id} data-provider={provider.id}>
                  <legend>{provider.label}</legend>
                  <label>
                    Base URL
                    <input
                      name={`${provider.id}_base_url`}
                      value={form.baseUrl}
                      placeholder={provider.defaultUrl}
                      onInput={(e) => {
                        const baseUrl = e.currentTarget.value;
                        // A confirmation of plain http:// was for the saved host only.
                        const sameHost =
                          origin(baseUrl, provider.defaultUrl) ===
                          origin(form.savedUrl, provider.defaultUrl);
                        editProvider(provider.id, {
                          baseUrl,
                          allowHttp: sameHost && settings[provider.id].allow_insecure_http === true,
                        });
                      }}
                    />
                  </label>
                  {insecure && (
                    <label class="inline-check">
                      <input
                        type="checkbox"
                        name={`${provider.id}_allow_insecure_http`}
                        checked={form.allowHttp}
                        onChange={(e) =>
                          editProvider(provider.id, { allowHttp: e.currentTarget.checked })
                        }
                      />
                      Send the key unencrypted over plain http:// to {hostOf(form.baseUrl)}
                    </label>
                  )}
                  {moved && (
                    <p class="muted" data-testid={`${provider.id}_key_asked_again`}>
                      The key will be asked again for the new host: the saved one is not sent to{" "}
                      {hostOf(form.baseUrl || provider.defaultUrl)}.
                    </p>
                  )}
                  <label>
                    Key
                    <input
                      name={`${provider.id}_api_key`}
                      type="password"
                      autocomplete="off"
                      value={form.newKey}
                      disabled={form.remove}
                      placeholder={
                        moved ? "the key for the new host" : form.keySet ? "(set)" : "not set"
                      }
                      onInput={(e) => editProvider(provider.id, { newKey: e.currentTarget.value })}
                    />
                  </label>
                  <p class="muted" data-testid={`${provider.id}_key_location`}>
                    {keyLocationText(form.location)}
                  </p>
                  {form.keySet && (
                    <label class="inline-check">
                      <input
                        type="checkbox"
                        name={`${provider.id}_remove_key`}
                        checked={form.remove}
                        onChange={(e) =>
                          editProvider(provider.id, { remove: e.currentTarget.checked })
                        }
                      />
                      Remove the saved key
                    </label>
                  )}
                </fieldset>
              );
            })}
            <p class="muted">
              A key in ANTHROPIC_API_KEY or OPENAI_API_KEY is used before a saved one.
            </p>
          </>
        )}
        <ErrorLine error={error} />
        <div class="dialog-buttons">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy || settings === null}>
            Save
          </button>
        </div>
      </form>
    </div>
  );
}
