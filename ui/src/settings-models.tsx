// The settings dialog's models: models besides the ones Flame knows by name, or overriding them,
// each with its provider, context window and longest reply.

import type { ModelSettings, ProviderKind, Settings_Serialize as Settings } from "./bindings";
import { PROVIDERS } from "./settings-providers";

/** A new row of the models list: an OpenAI-compatible server's model, with a common window. */
export const NEW_MODEL: ModelSettings = {
  name: "",
  provider: "openai",
  context_window: 128_000,
  max_output_tokens: 4_096,
};
/** A model's sizes, in tokens, as the row names them. */
const TOKEN_FIELDS = [
  { field: "context_window", label: "Context window" },
  { field: "max_output_tokens", label: "Longest reply" },
] as const;

export function ModelsSection({
  settings,
  onChange,
}: {
  settings: Settings;
  /** Changes the list from its current state, so edits that arrive before a render all count. */
  onChange: (change: (models: ModelSettings[]) => ModelSettings[]) => void;
}) {
  return (
    <fieldset class="models" data-testid="settings-models">
      <legend>Models</legend>
      <p class="muted">
        Models besides the ones Flame knows by name (Claude, GPT), or overriding them: local
        servers' models, for example, with their context windows.
      </p>
      {settings.models.map((model, i) => {
        const edit = (change: Partial<ModelSettings>) =>
          onChange((models) => models.map((m, j) => (j === i ? { ...m, ...change } : m)));
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
                onClick={() => onChange((models) => models.filter((_, j) => j !== i))}
              >
                ×
              </button>
            </div>
            <div class="model-line">
              {TOKEN_FIELDS.map(({ field, label }) => (
                <label key={field}>
                  {label}
                  <input
                    name={`model_${field}`}
                    type="number"
                    min={1}
                    value={model[field]}
                    onInput={(e) => edit({ [field]: Number(e.currentTarget.value) })}
                  />
                </label>
              ))}
              <span class="muted">tokens</span>
            </div>
          </div>
        );
      })}
      <button
        type="button"
        data-testid="add-model"
        onClick={() => onChange((models) => [...models, NEW_MODEL])}
      >
        Add a model
      </button>
    </fieldset>
  );
}
