// Model settings, one section each: the default model, autonomy, the per-turn budget and the tool
// results sent in full (`settings-general.tsx`); the approval of workspace tools; the cap on the
// storage workspace checkpoints take (`settings-checkpoints.tsx`); prices (`settings-prices.tsx`);
// models (`settings-models.tsx`); local servers (`settings-servers.tsx`); MCP servers
// (`settings-mcp.tsx`); and where each provider is, with its key (`settings-providers.tsx`). The dialog reads the settings, holds the edits and
// saves them all at once.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "./backend";
import type {
  ApiError,
  CheckpointStorage,
  ModelSettings,
  Settings_Serialize as Settings,
} from "./bindings";
import { ErrorLine } from "./error-line";
import { CheckpointsSection } from "./settings-checkpoints";
import { McpServersSection } from "./settings-mcp";
import { ApprovalSection, GeneralSection } from "./settings-general";
import { ModelsSection } from "./settings-models";
import { PricesSection } from "./settings-prices";
import {
  PROVIDERS,
  ProviderSection,
  needsNewKey,
  providerEdit,
  providerForm,
  type ProviderForm,
  type ProviderId,
} from "./settings-providers";
import { SettingsServers } from "./settings-servers";

export function SettingsDialog({
  backend,
  tree = null,
  onSaved,
  onClose,
}: {
  backend: Backend;
  /** The current tree, whose workspace's MCP servers "Add from other agents" offers too. */
  tree?: string | null;
  /** Told the settings as saved (keys redacted), so what depends on them can follow. */
  onSaved?: (settings: Settings) => void;
  onClose: () => void;
}) {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [providers, setProviders] = useState<Record<ProviderId, ProviderForm> | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [storage, setStorage] = useState<CheckpointStorage[] | ApiError | null>(null);

  useEffect(() => {
    void backend.getSettings().then((answer) => {
      if (answer.status === "ok") {
        setSettings(answer.data);
        setProviders({
          anthropic: providerForm(answer.data, "anthropic"),
          openai: providerForm(answer.data, "openai"),
        });
      } else setError(answer.error);
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
            <GeneralSection settings={settings} onChange={setSettings} />
            <ApprovalSection settings={settings} onChange={setSettings} />
            <CheckpointsSection settings={settings} storage={storage} onChange={setSettings} />
            <PricesSection
              settings={settings}
              onChange={(edit) =>
                setSettings((s) => (s ? { ...s, prices: edit(s.prices ?? []) } : s))
              }
            />
            <ModelsSection settings={settings} onChange={editModels} />
            <SettingsServers
              backend={backend}
              settings={settings}
              onChange={(local_servers) =>
                setSettings((current) => current && { ...current, local_servers })
              }
            />
            <McpServersSection
              backend={backend}
              settings={settings}
              tree={tree}
              onChange={(edit) =>
                setSettings((s) => (s ? { ...s, mcp_servers: edit(s.mcp_servers ?? []) } : s))
              }
            />
            {PROVIDERS.map((provider) => (
              <ProviderSection
                key={provider.id}
                provider={provider}
                form={providers[provider.id]}
                savedAllowHttp={settings[provider.id].allow_insecure_http === true}
                onChange={(change) => editProvider(provider.id, change)}
              />
            ))}
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
