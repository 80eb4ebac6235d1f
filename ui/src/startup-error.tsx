import type { ApiError, ErrorCode } from "./bindings";

// Startup fails only with the first three codes; the others belong to frame operations and are
// listed because the record must cover every code.
const HEADLINE: Record<ErrorCode, string> = {
  data_dir_unusable: "Flame cannot use its data directory",
  database_unreadable: "Flame cannot read its database",
  internal: "Flame could not start",
  not_found: "Flame could not start",
  refused: "Flame could not start",
  invalid: "Flame could not start",
  model_failed: "Flame could not start",
};

/** Shown instead of the panes when the backend could not open the data directory. */
export function StartupError({ error }: { error: ApiError }) {
  return (
    <div class="startup-error" role="alert" data-testid="startup-error" data-code={error.code}>
      <h1>{HEADLINE[error.code]}</h1>
      <p class="error-message">{error.message}</p>
      <p class="muted">
        Nothing was changed on disk. Fix the location or set <code>FLAME_HOME</code>, then start
        Flame again.
      </p>
    </div>
  );
}
