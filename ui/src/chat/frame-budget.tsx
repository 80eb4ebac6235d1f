// The focused frame's budget under its header: what its subtree spent of it, marked once it is
// spent, and a form to set, change or clear it. The budget is the backend's to check (a child's
// may not exceed what its parent has left); the form shows its refusal as it is.

import { useEffect, useRef, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type { ApiError, BudgetView_Serialize as BudgetView } from "../bindings";
import { budgetExceeded, budgetFromFields, spentOfBudget } from "../budget-text";
import { microsToDollars } from "../cost-text";
import { ErrorLine } from "../error-line";

export function FrameBudgetLine({
  asked = 0,
  backend,
  frame,
  view,
}: {
  /** Counts the palette's requests for the form: a new one opens it. */
  asked?: number;
  backend: Pick<Backend, "setFrameBudget">;
  frame: string;
  /** The frame's own budget as the outline carries it; null when it has none. */
  view: BudgetView | null;
}) {
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const budget = view?.budget ?? null;
  const [usd, setUsd] = useState("");
  const [tokens, setTokens] = useState("");
  const [calls, setCalls] = useState("");
  const spent = view === null ? null : spentOfBudget(view);
  const exceeded = view !== null && budgetExceeded(view);

  const open = () => {
    const shown = (n: number | null | undefined) =>
      n === null || n === undefined ? "" : String(n);
    const usd = budget?.micro_usd ?? null;
    setUsd(usd === null ? "" : microsToDollars(usd));
    setTokens(shown(budget?.tokens));
    setCalls(shown(budget?.tool_calls));
    setError(null);
    setEditing(true);
  };
  // A request made before this line was drawn (for another frame) is not for it.
  const askedSeen = useRef(asked);
  useEffect(() => {
    if (asked <= askedSeen.current) return;
    askedSeen.current = asked;
    open();
  }, [asked]);
  const save = async (cleared: boolean) => {
    const next = cleared ? null : budgetFromFields(usd, tokens, calls);
    const answer = await backend.setFrameBudget(frame, next);
    if (answer.status === "error") setError(answer.error);
    else setEditing(false);
  };

  const fields = [
    ["Dollars", "usd", "decimal", usd, setUsd],
    ["Tokens", "tokens", "numeric", tokens, setTokens],
    ["Tool calls", "calls", "numeric", calls, setCalls],
  ] as const;

  return (
    <div class="frame-budget" data-testid="frame-budget" data-exceeded={exceeded}>
      <span class="muted">Budget: </span>
      {spent === null ? <span class="muted">none of its own</span> : <span>{spent}</span>}
      {exceeded && (
        <strong class="budget-exceeded"> — spent; raise it or pop the frame</strong>
      )}{" "}
      {!editing && (
        <button type="button" class="link-button" data-testid="budget-edit" onClick={open}>
          {budget === null ? "Set…" : "Change…"}
        </button>
      )}
      {editing && (
        <form
          class="budget-form"
          onSubmit={(e) => {
            e.preventDefault();
            void save(false);
          }}
        >
          {fields.map(([label, name, mode, value, set]) => (
            <label key={name}>
              {label}
              <input
                name={name}
                inputMode={mode}
                value={value}
                onInput={(e) => set(e.currentTarget.value)}
              />
            </label>
          ))}
          <button type="submit" data-testid="budget-save">
            Save
          </button>
          {budget !== null && (
            <button type="button" data-testid="budget-clear" onClick={() => void save(true)}>
              Clear
            </button>
          )}
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
          <ErrorLine error={error} testId="budget-error" />
        </form>
      )}
    </div>
  );
}
