// The settings' local model servers: the addresses (host:port, one a line) Flame looks for
// Ollama, llama.cpp's server, LM Studio and vLLM at, and what answers at each now. Settings that
// never named any look at the usual ports, which the backend's list of models shows (the list is
// asked for when the section opens); those are the addresses shown until the person edits them,
// and an untouched list is not saved, so the settings keep following the usual ports. An empty
// list looks nowhere. The backend checks each address when the settings are saved.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "./backend";
import type {
  ApiError,
  LocalServer_Serialize as LocalServer,
  ModelList_Serialize as ModelList,
  Settings_Serialize as Settings,
} from "./bindings";
import { SERVER_NAMES } from "./chat/model-picker";

/** The addresses written in the box: one a line, trimmed, blank lines left out. */
export function addressLines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** What answered at an address, in words. */
export function serverStatus(server: LocalServer): string {
  if (server.kind === null) return server.problem ?? "nothing usable answers";
  const models = `${server.models} ${server.models === 1 ? "model" : "models"}`;
  const more = server.models_left_out > 0 ? `, ${server.models_left_out} more left out` : "";
  return `${SERVER_NAMES[server.kind]}, ${models}${more}`;
}

export function SettingsServers({
  backend,
  settings,
  onChange,
}: {
  backend: Backend;
  settings: Settings;
  /** Told the addresses as edited. */
  onChange: (addresses: string[]) => void;
}) {
  const [found, setFound] = useState<ModelList | ApiError | null>(null);
  // The text as typed, once the person has typed; until then the saved or usual addresses.
  const [draft, setDraft] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    void backend.listModels().then((answer) => {
      if (live) setFound(answer.status === "ok" ? answer.data : answer.error);
    });
    return () => {
      live = false;
    };
  }, [backend]);

  const list = found !== null && "models" in found ? found : null;
  const shown =
    draft ?? (settings.local_servers ?? list?.local_servers.map((s) => s.address) ?? []).join("\n");
  return (
    <fieldset class="local-servers" data-testid="settings-servers">
      <legend>Local model servers</legend>
      <p class="muted">
        Where Flame looks for Ollama, llama.cpp, LM Studio and vLLM on this computer, one host:port
        a line. Their models appear in the model picker, with no other setting.
      </p>
      <label>
        Addresses
        <textarea
          name="local_servers"
          rows={4}
          spellcheck={false}
          value={shown}
          placeholder="none: Flame looks for no local server"
          onInput={(e) => {
            setDraft(e.currentTarget.value);
            onChange(addressLines(e.currentTarget.value));
          }}
        />
      </label>
      {found === null && <p class="muted">Looking for local servers…</p>}
      {found !== null && !("models" in found) && (
        // Not an alert: the settings can be edited and saved all the same.
        <p class="muted" data-testid="local-servers-unknown" data-code={found.code}>
          Could not look for local servers: {found.message}
        </p>
      )}
      {list !== null && list.local_servers.length > 0 && (
        <ul class="local-server-status" data-testid="local-server-status" aria-label="Found">
          {list.local_servers.map((server) => (
            <li key={server.address} data-address={server.address}>
              <code>{server.address}</code> <span class="muted">{serverStatus(server)}</span>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}
