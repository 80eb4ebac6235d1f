// The flame graph's tooltip: what the pointer rests on — title, status, criteria, tokens,
// messages, cost, width in the chosen measure and time.

import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type {
  BudgetView_Serialize as BudgetView,
  FrameCost_Serialize as FrameCost,
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { budgetExceeded, spentOfBudget } from "../budget-text";
import { costOf, costPhrase, formatUsd } from "../cost-text";
import { STATUS_STYLE } from "../status-style";
import type { WeightMode } from "./layout";

const UNIT: Record<WeightMode, string> = {
  tokens: "tokens",
  equal: "frames",
  messages: "messages",
  time: "",
  cost: "",
};

/** The width row's text: the subtree's weight in the mode's unit. */
function widthText(mode: WeightMode, weight: number): string {
  if (mode === "time") return formatDuration(weight);
  if (mode === "cost") return `${formatUsd(weight)} with its subtree, at known prices`;
  return `${weight.toLocaleString()} ${UNIT[mode]}`;
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/**
 * A frame's cost as the tooltip has it: the cost, null when its subtree recorded no usage,
 * "reading" until the backend answers, "failed" when it could not.
 */
export type CostRead = FrameCost | null | "reading" | "failed";

function costText(cost: CostRead): string {
  if (cost === "reading") return "…";
  if (cost === "failed") return "could not be read";
  return cost === null ? "nothing recorded" : costPhrase(cost);
}

/**
 * Frame `id`'s cost for the tooltip: the outline's for the focused frame, else read from the
 * backend, and read again whenever the outline is replaced (a change, or new prices).
 */
export function useFrameCost(
  backend: Pick<Backend, "frameCost">,
  outline: TreeOutline,
  id: string | null,
): CostRead {
  const [read, setRead] = useState<{ id: string; cost: CostRead } | null>(null);
  const own = id === null || id === outline.tree.focus;
  useEffect(() => {
    if (own) return;
    let live = true;
    void backend.frameCost(id).then((answer) => {
      if (!live) return;
      const cost =
        answer.status === "error"
          ? "failed"
          : answer.data.subtree.completeness === "none"
            ? null
            : answer.data;
      setRead({ id, cost });
    });
    return () => {
      live = false;
    };
  }, [backend, outline, id, own]);
  if (id === null) return null;
  if (own) return costOf(outline, id);
  return read !== null && read.id === id ? read.cost : "reading";
}

export function Tooltip({
  frame,
  cost,
  budget = null,
  weight,
  mode,
  x,
  y,
  paneWidth,
}: {
  frame: FrameOutline;
  /** The frame's cost; null when its subtree recorded no usage. */
  cost: CostRead;
  /** The frame's own budget and its subtree's spend; null when it has none. */
  budget?: BudgetView | null;
  weight: number;
  mode: WeightMode;
  x: number;
  y: number;
  paneWidth: number;
}) {
  const started = frame.started_at;
  const ran = started === null ? null : (frame.ended_at ?? Date.now()) - started;
  // Near the right edge the tooltip opens to the left of the pointer, so it stays in the pane.
  const style: JSX.CSSProperties =
    x > paneWidth - 300
      ? { right: `${paneWidth - x + 14}px`, top: `${y + 40}px` }
      : { left: `${x + 14}px`, top: `${y + 40}px` };
  return (
    <div class="graph-tooltip" role="tooltip" style={style}>
      <div class="tooltip-title">{frame.title}</div>
      <div class="tooltip-status">
        <span class={`swatch status-${frame.status}`} />
        {STATUS_STYLE[frame.status].label}
        {frame.rolled_back_at !== null && (
          <span class="tooltip-rolled-back">
            , ↶ rolled back {new Date(frame.rolled_back_at).toLocaleString()}
          </span>
        )}
      </div>
      {frame.success_criteria_compacted !== null && (
        <div class="tooltip-criteria">{frame.success_criteria_compacted}</div>
      )}
      <dl>
        <dt>Tokens</dt>
        <dd>
          {frame.tokens.toLocaleString()} own
          {mode === "tokens" ? `, ${weight.toLocaleString()} with its subtree` : ""}
        </dd>
        <dt>Messages</dt>
        <dd>{frame.message_count.toLocaleString()}</dd>
        <dt>Cost</dt>
        <dd data-testid="tooltip-cost">{costText(cost)}</dd>
        {budget !== null && (
          <>
            <dt>Budget</dt>
            <dd data-testid="tooltip-budget">
              {spentOfBudget(budget)}
              {budgetExceeded(budget) ? " (spent)" : ""}
            </dd>
          </>
        )}
        {mode !== "tokens" && (
          <>
            <dt>Width</dt>
            <dd>{widthText(mode, weight)}</dd>
          </>
        )}
        <dt>Time</dt>
        <dd>
          {ran === null
            ? "not started"
            : `${formatDuration(ran)}${frame.ended_at === null ? " so far" : ""}`}
        </dd>
      </dl>
      <div class="tooltip-id">{frame.id}</div>
    </div>
  );
}
