import type { ComponentChildren } from "preact";

import type { AppInfo, DataDirSource } from "./bindings";

const SOURCE_LABEL: Record<DataDirSource, string> = {
  flame_home: "from FLAME_HOME",
  platform: "default location",
};

/**
 * The bottom line of the window: where the data lives, the current tree's workspace (the
 * `children`), which Flame this is, and the settings (models, keys, autonomy, approval), which are
 * the whole app's rather than a frame's.
 */
export function StatusBar({
  info,
  onOpenSettings,
  children,
}: {
  info: AppInfo | null;
  onOpenSettings: () => void;
  children?: ComponentChildren;
}) {
  if (info === null) {
    return (
      <footer class="status-bar" aria-busy="true">
        Opening…
      </footer>
    );
  }
  return (
    <footer class="status-bar">
      <span class="status-item" title={info.database_path}>
        Data <code data-testid="data-dir">{info.data_dir}</code>{" "}
        <span class="muted">({SOURCE_LABEL[info.data_dir_source]})</span>
      </span>
      {children}
      <span class="status-item muted">schema v{info.schema_version}</span>
      <span class="status-item muted">Flame {info.version}</span>
      <button
        type="button"
        class="status-settings header-button"
        data-testid="settings-button"
        onClick={onOpenSettings}
      >
        Settings…
      </button>
    </footer>
  );
}
