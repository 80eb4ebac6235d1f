// Which model the window talks to. The settings name a default model and list extra models; the
// composer offers those, the default preselected, and every call that asks a model something
// (a message, an approval, generated results) is sent with the one chosen. The choice lasts
// while the window is open; it is not saved, since the settings' default is what persists.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type { ApiError, Settings_Serialize as Settings } from "../bindings";

/** The models the settings configure: the default first, then the listed ones, each once. */
export function configuredModels(settings: Settings): string[] {
  const names = [settings.default_model, ...settings.models.map((m) => m.name)];
  const seen = new Set<string>();
  return names.filter((name): name is string => {
    if (name === null || name.trim() === "" || seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}

/** The window's model choice, read from the settings. */
export interface ModelChoice {
  /** Whether the settings have been read (or failed to be). */
  loaded: boolean;
  /** The configured models, the default first. */
  models: string[];
  /** The model calls are sent with: the chosen one, else the default; null when none is configured. */
  chosen: string | null;
  /** Why the settings could not be read, when they could not. */
  error: ApiError | null;
  choose: (model: string) => void;
  /** Takes settings just saved, so the list follows them without reading them again. */
  update: (settings: Settings) => void;
}

export function useModelChoice(backend: Backend): ModelChoice {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [picked, setPicked] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    void backend.getSettings().then((answer) => {
      if (!live) return;
      if (answer.status === "ok") setSettings(answer.data);
      else setError(answer.error);
    });
    return () => {
      live = false;
    };
  }, [backend]);

  const models = settings === null ? [] : configuredModels(settings);
  // A pick the settings no longer list gives way to the default.
  const chosen = picked !== null && models.includes(picked) ? picked : (models[0] ?? null);
  return {
    loaded: settings !== null || error !== null,
    models,
    chosen,
    error,
    choose: setPicked,
    update: (saved) => {
      setError(null);
      setSettings(saved);
    },
  };
}

/** The composer's compact model select, or a way to the settings when there is no model. */
export function ModelPicker({
  choice,
  onOpenSettings,
}: {
  choice: ModelChoice;
  onOpenSettings: () => void;
}) {
  if (!choice.loaded) return null;
  if (choice.models.length === 0) {
    return (
      <button
        type="button"
        class="link-button model-missing"
        data-testid="model-missing"
        title={choice.error?.message}
        onClick={onOpenSettings}
      >
        {choice.error === null
          ? "no model configured — Settings…"
          : "settings unreadable — Settings…"}
      </button>
    );
  }
  return (
    <select
      class="model-picker"
      aria-label="Model"
      title="The model this window talks to"
      data-testid="model-picker"
      value={choice.chosen ?? undefined}
      onChange={(e) => choice.choose(e.currentTarget.value)}
    >
      {choice.models.map((name) => (
        <option key={name} value={name}>
          {name}
        </option>
      ))}
    </select>
  );
}
