// What the focused frame cost: a line in its header (its own replies and its subtree's), and the
// context inspector's table of its own usage by model. The amounts are the backend's (see
// `flame_model::cost`), read with the outline; a model with no known price shows its tokens.

import type {
  FrameCost_Serialize as FrameCost,
  ModelCost_Serialize as ModelCost,
} from "../bindings";
import { costPhrase, describeCost, formatUsd } from "../cost-text";

/** The header's cost line; nothing when the frame's subtree recorded no usage. */
export function FrameCostLine({ cost }: { cost: FrameCost | null }) {
  if (cost === null) return null;
  return (
    <p
      class="frame-cost"
      data-testid="frame-cost"
      data-completeness={cost.subtree.completeness}
      title="At list prices per model, from the usage each reply recorded (Settings: Prices)"
    >
      <span class="muted">Cost: </span>
      {costPhrase(cost)}
    </p>
  );
}

function modelCost(row: ModelCost): string {
  return row.micro_usd === null ? "price unknown" : formatUsd(row.micro_usd);
}

/** The frame's own usage by model with what each cost, and the subtree's total. */
export function CostBreakdown({ cost }: { cost: FrameCost | null }) {
  if (cost === null) {
    return (
      <p class="inspector-cost muted" data-testid="context-cost">
        No model call recorded usage in this frame or below it.
      </p>
    );
  }
  return (
    <details class="inspector-cost" data-testid="context-cost">
      <summary>
        Spent here: {describeCost(cost.own)}; with its subtree: {describeCost(cost.subtree)}
      </summary>
      {cost.models.length > 0 && (
        <table data-testid="context-cost-models">
          <thead>
            <tr>
              <th>Model</th>
              <th class="number">Input</th>
              <th class="number">Cache read</th>
              <th class="number">Cache write</th>
              <th class="number">Cache write (1&nbsp;h)</th>
              <th class="number">Output</th>
              <th class="number">Cost</th>
              <th>Price as of</th>
            </tr>
          </thead>
          <tbody>
            {cost.models.map((row) => (
              <tr key={row.model ?? ""} data-priced={row.micro_usd !== null}>
                <td>{row.model ?? "(no model recorded)"}</td>
                <td class="number">{row.usage.input_tokens.toLocaleString("en-US")}</td>
                <td class="number">{row.usage.cache_read_tokens.toLocaleString("en-US")}</td>
                <td class="number">{row.usage.cache_write_tokens.toLocaleString("en-US")}</td>
                <td class="number">{row.usage.cache_write_long_tokens.toLocaleString("en-US")}</td>
                <td class="number">{row.usage.output_tokens.toLocaleString("en-US")}</td>
                <td class="number">{modelCost(row)}</td>
                <td class="muted">{row.as_of ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </details>
  );
}
