// The settings dialog's first sections: the default model, autonomy, the per-message budget, how
// many tool results are sent in full, whether project instructions are read, and the approval of
// workspace tools (per kind: automatic, or asked each time; commands also automatic in the
// sandbox, asking only to leave it).

import type {
  Approval,
  ApprovalPolicy_Serialize as ApprovalPolicy,
  Autonomy,
  RunApproval,
  Settings_Serialize as Settings,
} from "./bindings";
import { dollarLimitOf, limitOf } from "./budget-text";
import { microsToDollars } from "./cost-text";

/** A section's settings, and what it calls with them changed. */
export interface SectionProps {
  settings: Settings;
  onChange: (settings: Settings) => void;
}

export function GeneralSection({ settings, onChange }: SectionProps) {
  const setBudget = (change: Partial<Settings["turn_budget"]>) =>
    onChange({ ...settings, turn_budget: { ...settings.turn_budget, ...change } });
  return (
    <>
      <label>
        Default model
        <input
          name="default_model"
          list="known-models"
          value={settings.default_model ?? ""}
          placeholder="for example claude-sonnet-4-5 or gpt-4o"
          onInput={(e) => onChange({ ...settings, default_model: e.currentTarget.value })}
        />
        <datalist id="known-models">
          {settings.models.map((m) => (
            <option key={m.name} value={m.name} />
          ))}
        </datalist>
      </label>
      <label>
        Autonomy
        <select
          name="autonomy"
          value={settings.autonomy}
          onChange={(e) => onChange({ ...settings, autonomy: e.currentTarget.value as Autonomy })}
        >
          <option value="auto">auto: the agent pushes and pops on its own</option>
          <option value="ask">ask: each push or pop waits for you</option>
        </select>
      </label>
      <label>
        Tool calls per message (empty: no limit)
        <input
          name="turn_budget_tool_calls"
          type="number"
          min={1}
          value={settings.turn_budget.tool_calls ?? ""}
          onInput={(e) => setBudget({ tool_calls: limitOf(e.currentTarget.value) })}
        />
      </label>
      <label>
        Dollars per message, where the model's price is known (empty: no limit)
        <input
          name="turn_budget_usd"
          type="number"
          min={0.01}
          step={0.01}
          value={
            settings.turn_budget.micro_usd === null
              ? ""
              : microsToDollars(settings.turn_budget.micro_usd)
          }
          onInput={(e) => setBudget({ micro_usd: dollarLimitOf(e.currentTarget.value) })}
        />
      </label>
      <label>
        Newest tool results sent in full
        <input
          name="keep_tool_results"
          type="number"
          min={1}
          value={settings.keep_tool_results}
          onInput={(e) =>
            onChange({ ...settings, keep_tool_results: Number(e.currentTarget.value) })
          }
        />
        <span class="muted">
          Older results in a frame are sent as one-line stubs the model can read back.
        </span>
      </label>
      <label class="inline-check">
        <input
          name="project_instructions"
          type="checkbox"
          checked={settings.project_instructions}
          onChange={(e) => onChange({ ...settings, project_instructions: e.currentTarget.checked })}
        />
        Read project instructions (AGENTS.md, CLAUDE.md)
      </label>
      <p class="muted settings-note">
        A frame's opening starts with the AGENTS.md (or CLAUDE.md) of the workspace and of the
        folders worked in, and your own AGENTS.md beside Flame's settings; a changed file is read at
        the frame's next opening.
      </p>
    </>
  );
}

/** The approval policy's rows: the kind of workspace tool each governs, in words. */
export const APPROVAL_ROWS: { kind: keyof ApprovalPolicy; label: string; tools: string }[] = [
  { kind: "read", label: "Reading", tools: "read, list and search files" },
  { kind: "change", label: "Changing files", tools: "write and edit files" },
  { kind: "run", label: "Running commands", tools: "run shell commands" },
];

/** The levels a row offers: commands have one more, automatic in the sandbox. */
const LEVELS: Record<keyof ApprovalPolicy, { value: Approval | RunApproval; label: string }[]> = {
  read: [
    { value: "auto", label: "Automatic" },
    { value: "ask", label: "Ask" },
  ],
  change: [
    { value: "auto", label: "Automatic" },
    { value: "ask", label: "Ask" },
  ],
  run: [
    { value: "auto", label: "Automatic" },
    { value: "auto_in_sandbox", label: "Automatic in the sandbox" },
    { value: "ask", label: "Ask" },
  ],
};

export function ApprovalSection({ settings, onChange }: SectionProps) {
  return (
    <fieldset class="approval-policy" data-testid="settings-approval">
      <legend>Workspace tools</legend>
      <p class="muted">
        Whether the agent's calls of each kind run at once or wait for you. A prompt can also allow
        the rest of a tree's calls of its kind. Commands run in a sandbox where one can start (only
        the workspace writable, no network); "Automatic in the sandbox" asks only for a command that
        asks to leave it.
      </p>
      {APPROVAL_ROWS.map((row) => (
        <label key={row.kind} class="approval-row" data-testid="approval-row">
          <span>
            {row.label} <span class="muted">({row.tools})</span>
          </span>
          <select
            name={`approval_${row.kind}`}
            value={settings.approval[row.kind]}
            onChange={(e) =>
              onChange({
                ...settings,
                approval: { ...settings.approval, [row.kind]: e.currentTarget.value },
              })
            }
          >
            {LEVELS[row.kind].map((level) => (
              <option key={level.value} value={level.value}>
                {level.label}
              </option>
            ))}
          </select>
        </label>
      ))}
    </fieldset>
  );
}
