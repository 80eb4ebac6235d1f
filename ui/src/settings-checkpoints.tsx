// The settings dialog's checkpoints: the cap on the storage workspace checkpoints take, with what
// each workspace's checkpoints take now.

import type { ApiError, CheckpointStorage } from "./bindings";
import { ErrorLine } from "./error-line";
import type { SectionProps } from "./settings-general";

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
export function CheckpointsSection({
  settings,
  storage,
  onChange,
}: SectionProps & { storage: CheckpointStorage[] | ApiError | null }) {
  return (
    <fieldset class="checkpoints" data-testid="settings-checkpoints">
      <legend>Checkpoints</legend>
      <p class="muted">
        Flame snapshots a tree's workspace when a frame starts and around each change, so a frame's
        changes can be shown and rolled back. Past the cap, the oldest snapshots of a workspace are
        removed.
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
            onChange({ ...settings, checkpoint_cap_mb: Number(e.currentTarget.value) })
          }
        />
      </label>
      <CheckpointStorageList storage={storage} />
    </fieldset>
  );
}
