import type { AppInfo, DataDirSource } from "./bindings";

const SOURCE_LABEL: Record<DataDirSource, string> = {
  flame_home: "from FLAME_HOME",
  platform: "default location",
};

/** The bottom line of the window: where the data lives and which Flame this is. */
export function StatusBar({ info }: { info: AppInfo | null }) {
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
      <span class="status-item muted">schema v{info.schema_version}</span>
      <span class="status-item muted">Flame {info.version}</span>
    </footer>
  );
}
