// The context inspector: exactly what the model receives in a frame, as the backend assembled
// it (`frameContext`), with the cost of each kind of section against the budget, and what the
// frame's model calls cost in money (by model, from the outline's costs).

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type {
  ApiError,
  ContextDoc_Serialize as ContextDoc,
  FrameCost_Serialize as FrameCost,
} from "../bindings";
import { CostBreakdown } from "./frame-cost";
import { KIND_LABEL, formatTokens, inspectorNumbers } from "./inspector-numbers";

const STATE_LABEL = {
  full: "full",
  compacted: "compacted results",
  title_only: "title only",
  bare: "id and status only",
  dropped: "left out",
} as const;

type Load =
  { state: "loading" } | { state: "ready"; doc: ContextDoc } | { state: "failed"; error: ApiError };

/** Reads the context of `frame` again whenever `seq` (the tree's newest change) moves. */
export function ContextInspector({
  backend,
  frame,
  seq,
  cost = null,
}: {
  backend: Backend;
  frame: string;
  seq: number;
  /** What the frame's model calls cost; null when its subtree recorded no usage. */
  cost?: FrameCost | null;
}) {
  const [load, setLoad] = useState<Load>({ state: "loading" });
  useEffect(() => {
    let live = true;
    void backend.frameContext(frame, null).then((answer) => {
      if (!live) return;
      setLoad(
        answer.status === "ok"
          ? { state: "ready", doc: answer.data }
          : { state: "failed", error: answer.error },
      );
    });
    return () => {
      live = false;
    };
  }, [backend, frame, seq]);

  if (load.state === "loading") {
    return (
      <div class="inspector muted" data-testid="context-inspector">
        Assembling the context…
      </div>
    );
  }
  if (load.state === "failed") {
    return (
      <div class="inspector" data-testid="context-inspector" role="alert">
        <p class="error-message">{load.error.message}</p>
      </div>
    );
  }
  const { doc } = load;
  const numbers = inspectorNumbers(doc.report);
  return (
    <div class="inspector" data-testid="context-inspector">
      <p class="inspector-summary" data-testid="context-summary">
        Flame sends <strong>{formatTokens(numbers.total)}</strong> tokens of a{" "}
        {formatTokens(numbers.budget)} budget; a linear chat would send{" "}
        <strong>{formatTokens(numbers.linear)}</strong>
        {numbers.ratio !== null
          ? ` (${formatTokens(numbers.saved)} fewer, ${numbers.ratio.toFixed(1)}× smaller).`
          : "."}
        {!doc.report.fits && (
          <span class="error-message"> Even what is never left out does not fit the budget.</span>
        )}
      </p>
      <CostBreakdown cost={cost} />
      <div
        class="token-bar"
        role="img"
        aria-label={`${numbers.total} of ${numbers.budget} tokens`}
        data-testid="token-bar"
      >
        {numbers.stripes.map((stripe) => (
          <span
            key={stripe.kind}
            class={`token-stripe kind-${stripe.kind}`}
            style={{ width: `${stripe.percent}%` }}
            title={`${KIND_LABEL[stripe.kind]}: ${stripe.tokens} tokens`}
            data-kind={stripe.kind}
          />
        ))}
      </div>
      <ul class="token-legend">
        {numbers.stripes.map((stripe) => (
          <li key={stripe.kind}>
            <span class={`swatch kind-${stripe.kind}`} />
            {KIND_LABEL[stripe.kind]} {formatTokens(stripe.tokens)}
          </li>
        ))}
      </ul>
      <details class="inspector-sections">
        <summary>{doc.report.sections.length} sections</summary>
        <table data-testid="context-sections">
          <tbody>
            {doc.report.sections.map((section, i) => (
              <tr key={i} data-kind={section.kind} data-state={section.state}>
                <td>{KIND_LABEL[section.kind]}</td>
                <td>{section.label}</td>
                <td class="number">{section.tokens}</td>
                <td class={section.state === "full" ? "muted" : ""}>
                  {STATE_LABEL[section.state]}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      {(numbers.changed.length > 0 || doc.report.omitted_messages > 0) && (
        <div class="inspector-changed" data-testid="context-changed">
          <p>To fit the budget:</p>
          <ul>
            {numbers.changed.map((section, i) => (
              <li key={i}>
                {section.label}: {STATE_LABEL[section.state]}
              </li>
            ))}
            {doc.report.omitted_messages > 0 && (
              <li>{doc.report.omitted_messages} oldest messages left out</li>
            )}
          </ul>
        </div>
      )}
      {doc.report.masked_results > 0 && (
        <p class="inspector-masked muted" data-testid="context-masked">
          {doc.report.masked_results} older tool{" "}
          {doc.report.masked_results === 1 ? "result is" : "results are"} sent as one-line stubs
          {doc.report.masked_calls > 0 &&
            `, and ${doc.report.masked_calls} of their calls with long arguments cut`}{" "}
          (the model can read them back), saving{" "}
          {doc.report.masked_tokens_saved.toLocaleString("en")} tokens.
        </p>
      )}
      <details class="inspector-system" open>
        <summary>System text sent to the model</summary>
        <pre data-testid="context-system">{doc.system}</pre>
      </details>
    </div>
  );
}
