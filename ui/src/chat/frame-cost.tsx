// What the focused frame cost: a line in its header (its own replies and its subtree's, and what
// the gateway billed for its calls there beside what the agent's own requests would have cost),
// and the context inspector's table of its own usage by model. The amounts are the backend's (see
// `flame_model::cost`), read with the outline; a model with no known price shows its tokens.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type {
  FrameCost_Serialize as FrameCost,
  GatewaySavings,
  ModelCost_Serialize as ModelCost,
} from "../bindings";
import { costPhrase, describeCost, formatUsd, totalTokens } from "../cost-text";

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

/**
 * What the gateway's calls in frame `frame` were billed and would have cost, read from the backend
 * once for the frame and again when its own cost changes (a call through the gateway records its
 * usage there); null for a frame without such calls, and until it has been read.
 */
export function useGatewaySavings(
  backend: Backend,
  frame: string,
  cost: FrameCost | null,
): GatewaySavings | null {
  const [read, setRead] = useState<{ frame: string; savings: GatewaySavings | null } | null>(null);
  // A frame that recorded no usage made no call through the gateway that it was billed for.
  const spent = cost === null ? null : `${cost.own.micro_usd}:${totalTokens(cost.own.usage)}`;
  useEffect(() => {
    if (spent === null) return;
    let live = true;
    void backend.gatewayFrame(frame).then((answer) => {
      if (live && answer.status === "ok") setRead({ frame, savings: answer.data });
    });
    return () => {
      live = false;
    };
  }, [backend, frame, spent]);
  return spent !== null && read?.frame === frame ? read.savings : null;
}

/** The header's line for a frame whose calls went through the gateway; nothing for others. */
export function GatewayCostLine({ savings }: { savings: GatewaySavings | null }) {
  if (savings === null || savings.calls === 0) return null;
  return (
    <p
      class="frame-cost"
      data-testid="frame-gateway-cost"
      title="What the provider billed for the calls the gateway sent from this frame, and what the agent's own requests would have cost under the same prompt cache"
    >
      billed {describeCost(savings.billed)} through the gateway (the agent's own requests:{" "}
      {describeCost(savings.client)})
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
