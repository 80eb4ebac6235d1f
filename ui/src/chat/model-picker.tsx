// Which model the window talks to. The picker offers the models the backend lists (`listModels`),
// grouped by where each came from — the settings, each provider's own list, each model server
// found on this computer (Ollama, llama.cpp, LM Studio, vLLM) — with its context window where it
// is known. The list is asked for when the window opens and again each time the picker is opened,
// so a local server started since shows up. Until it arrives (or when it cannot be had) the
// settings' models are offered. Every call that asks a model something (a message, an approval,
// generated results) is sent with the one chosen; a local model is sent by its `local:` name,
// which the backend resolves with no settings edit. The choice lasts while the window is open; it
// is not saved, since the settings' default is what persists.

import { useEffect, useRef, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type {
  ApiError,
  ModelList_Serialize as ModelList,
  ModelSource,
  ServerKind,
  Settings_Serialize as Settings,
} from "../bindings";

/** The models the settings configure: the default first, then the listed ones, each once. */
export function configuredModels(settings: Pick<Settings, "default_model" | "models">): string[] {
  const names = [settings.default_model, ...settings.models.map((m) => m.name)];
  const seen = new Set<string>();
  return names.filter((name): name is string => {
    if (name === null || name.trim() === "" || seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}

/** Each kind of local server by the name its makers give it. */
export const SERVER_NAMES: Record<ServerKind, string> = {
  ollama: "Ollama",
  llama_cpp: "llama.cpp",
  lm_studio: "LM Studio",
  vllm: "vLLM",
  openai_compatible: "OpenAI-compatible server",
};

const PROVIDER_NAMES = { anthropic: "Anthropic", openai: "OpenAI" } as const;

/** One model of the picker. */
export interface PickerModel {
  /** What calls are sent with. */
  id: string;
  /** What is shown. */
  name: string;
  contextWindow: number | null;
}

/** The models of one source, under its label. */
export interface ModelGroup {
  /** Tells the groups apart: `settings`, `provider:openai`, `local:127.0.0.1:8080`. */
  key: string;
  label: string;
  models: PickerModel[];
}

function groupOf(source: ModelSource): { key: string; label: string } {
  switch (source.kind) {
    case "configured":
      return { key: "settings", label: "Settings" };
    case "provider":
      return {
        key: `provider:${source.provider}`,
        label: `${PROVIDER_NAMES[source.provider]}'s models`,
      };
    case "local":
      return {
        key: `local:${source.address}`,
        label: `${SERVER_NAMES[source.server]} at ${source.address}`,
      };
  }
}

/**
 * The picker's groups: the configured models first (with the windows the list gives them), then
 * the list's other models by source, in the list's order, each model once. Without a list the
 * configured models are the one group.
 */
export function modelGroups(configured: string[], list: ModelList | null): ModelGroup[] {
  const listed = new Map((list?.models ?? []).map((m) => [m.id, m]));
  const groups: ModelGroup[] = [];
  const seen = new Set<string>();
  const add = (key: string, label: string, model: PickerModel) => {
    if (seen.has(model.id)) return;
    seen.add(model.id);
    let group = groups.find((g) => g.key === key);
    if (group === undefined) {
      group = { key, label, models: [] };
      groups.push(group);
    }
    group.models.push(model);
  };
  for (const id of configured) {
    const known = listed.get(id);
    // A local model the settings name is shown under its server when the server still lists it.
    if (known !== undefined && known.source.kind === "local") continue;
    add("settings", "Settings", { id, name: id, contextWindow: known?.context_window ?? null });
  }
  for (const model of list?.models ?? []) {
    const { key, label } = groupOf(model.source);
    add(key, label, { id: model.id, name: model.name, contextWindow: model.context_window });
  }
  return groups;
}

/** A context window in a few characters: `8k`, `128k`, `200k`, `1M`. */
export function windowLabel(tokens: number): string {
  if (tokens >= 1_000_000) return `${Number((tokens / 1_000_000).toFixed(1))}M`;
  if (tokens >= 1024 && tokens % 1024 === 0) return `${tokens / 1024}k`;
  if (tokens >= 1000) return `${Math.round(tokens / 1000)}k`;
  return String(tokens);
}

/** The window's model choice, read from the settings and the backend's list of models. */
export interface ModelChoice {
  /** Whether the settings have been read (or failed to be). */
  loaded: boolean;
  /** Every model offered, by id, in the picker's order. */
  models: string[];
  /** The models offered, by where they came from. */
  groups: ModelGroup[];
  /**
   * The model calls are sent with: the chosen one, else the default (the first configured), else
   * the first listed; null when there is none.
   */
  chosen: string | null;
  /** Why the settings could not be read, when they could not. */
  error: ApiError | null;
  choose: (model: string) => void;
  /** Takes settings just saved, so the list follows them without reading them again. */
  update: (settings: Settings) => void;
  /** Asks for the list again (the picker is being opened); one request at a time. */
  refresh: () => void;
}

export function useModelChoice(backend: Backend): ModelChoice {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [list, setList] = useState<ModelList | null>(null);
  const [picked, setPicked] = useState<string | null>(null);
  const listing = useRef(false);
  const live = useRef(true);

  const refresh = () => {
    if (listing.current) return;
    listing.current = true;
    void backend.listModels().then((answer) => {
      listing.current = false;
      // A list that cannot be had leaves the one shown (or the settings' models alone).
      if (live.current && answer.status === "ok") setList(answer.data);
    });
  };

  useEffect(() => {
    live.current = true;
    void backend.getSettings().then((answer) => {
      if (!live.current) return;
      if (answer.status === "ok") setSettings(answer.data);
      else setError(answer.error);
    });
    refresh();
    return () => {
      live.current = false;
    };
  }, [backend]);

  const configured = settings === null ? [] : configuredModels(settings);
  const groups = modelGroups(configured, list);
  const models = groups.flatMap((g) => g.models.map((m) => m.id));
  // A pick the list no longer holds gives way to the default.
  const fallback =
    typeof settings?.default_model === "string" && models.includes(settings.default_model)
      ? settings.default_model
      : (models[0] ?? null);
  const chosen = picked !== null && models.includes(picked) ? picked : fallback;
  return {
    loaded: settings !== null || error !== null,
    models,
    groups,
    chosen,
    error,
    choose: setPicked,
    update: (saved) => {
      setError(null);
      setSettings(saved);
      // Saved settings may name other models, keys or addresses to look at.
      refresh();
    },
    refresh,
  };
}

function optionText(model: PickerModel): string {
  return model.contextWindow === null
    ? model.name
    : `${model.name} · ${windowLabel(model.contextWindow)}`;
}

function optionTitle(model: PickerModel): string {
  const window =
    model.contextWindow === null
      ? "context window unknown"
      : `${model.contextWindow.toLocaleString("en-US")} tokens of context`;
  return `${model.id} (${window})`;
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
  const option = (model: PickerModel) => (
    <option key={model.id} value={model.id} title={optionTitle(model)}>
      {optionText(model)}
    </option>
  );
  return (
    <select
      class="model-picker"
      aria-label="Model"
      title="The model this window talks to"
      data-testid="model-picker"
      value={choice.chosen ?? undefined}
      // Opening the picker looks again for local servers (a pointer press, or keyboard focus).
      onMouseDown={choice.refresh}
      onFocus={choice.refresh}
      onChange={(e) => choice.choose(e.currentTarget.value)}
    >
      {choice.groups.length === 1
        ? choice.groups[0]?.models.map(option)
        : choice.groups.map((group) => (
            <optgroup key={group.key} label={group.label} data-group={group.key}>
              {group.models.map(option)}
            </optgroup>
          ))}
    </select>
  );
}
