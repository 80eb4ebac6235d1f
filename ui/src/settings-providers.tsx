// The settings dialog's model providers: each one's base URL and key. Keys are never shown: the
// backend answers "(set)" for a saved key, the field stays empty with that placeholder, and an
// untouched field keeps the saved key (null is sent). A key is removed only by ticking "Remove",
// which sends "". Each provider says where its key is kept (the system keyring, the settings
// file, or an environment variable). A base URL moved to another host asks for the key again (the
// backend drops the saved one: a key only goes where it was given), and plain http:// to another
// computer needs the person's confirmation.

import type {
  KeyLocation,
  ProviderSettings_Deserialize as ProviderEdit,
  Settings_Serialize as Settings,
} from "./bindings";

export const PROVIDERS = [
  { id: "anthropic", label: "Anthropic", defaultUrl: "https://api.anthropic.com" },
  { id: "openai", label: "OpenAI or compatible", defaultUrl: "https://api.openai.com/v1" },
] as const;

export type ProviderId = (typeof PROVIDERS)[number]["id"];

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
/** The form of a provider as saved in `loaded`. */
export function providerForm(loaded: Settings, id: ProviderId): ProviderForm {
  return {
    baseUrl: loaded[id].base_url ?? "",
    savedUrl: loaded[id].base_url ?? "",
    keySet: loaded[id].api_key !== null,
    newKey: "",
    remove: false,
    allowHttp: loaded[id].allow_insecure_http === true,
    location: loaded[id].key_location ?? null,
  };
}

/** One provider's fieldset; `savedAllowHttp` is whether the saved settings allow plain http://. */
export function ProviderSection({
  provider,
  form,
  savedAllowHttp,
  onChange,
}: {
  provider: (typeof PROVIDERS)[number];
  form: ProviderForm;
  savedAllowHttp: boolean;
  onChange: (change: Partial<ProviderForm>) => void;
}) {
  const moved = form.keySet && movesHost(form, provider.defaultUrl);
  const insecure = isInsecureHttp(form.baseUrl);
  return (
    <fieldset data-provider={provider.id}>
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
              origin(baseUrl, provider.defaultUrl) === origin(form.savedUrl, provider.defaultUrl);
            onChange({ baseUrl, allowHttp: sameHost && savedAllowHttp });
          }}
        />
      </label>
      {insecure && (
        <label class="inline-check">
          <input
            type="checkbox"
            name={`${provider.id}_allow_insecure_http`}
            checked={form.allowHttp}
            onChange={(e) => onChange({ allowHttp: e.currentTarget.checked })}
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
          placeholder={moved ? "the key for the new host" : form.keySet ? "(set)" : "not set"}
          onInput={(e) => onChange({ newKey: e.currentTarget.value })}
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
            onChange={(e) => onChange({ remove: e.currentTarget.checked })}
          />
          Remove the saved key
        </label>
      )}
    </fieldset>
  );
}
