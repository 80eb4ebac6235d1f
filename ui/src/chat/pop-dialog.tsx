// Popping a frame from the chat: the model proposes the hand-off (`generateResults`), the person
// reads and edits it, and `popFrame` saves what the person kept. When no proposal can be made
// (no model, a failed call), the person writes the results.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type { ApiError, PopStatus } from "../bindings";
import { ErrorLine } from "../error-line";
import type { DispatchFrameAction } from "../frame-actions";

type Generation =
  | { state: "generating" }
  | { state: "done"; criteriaMet: boolean }
  | { state: "failed"; error: ApiError };

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

export function PopDialog({
  backend,
  frame,
  title,
  model,
  dispatch,
  onClose,
}: {
  backend: Backend;
  frame: string;
  title: string;
  /** The model that writes the proposal; null for the settings' default. */
  model: string | null;
  /** Sends the pop like every frame action (the tree reloads); resolves to the refusal. */
  dispatch: DispatchFrameAction;
  onClose: () => void;
}) {
  const [generation, setGeneration] = useState<Generation>({ state: "generating" });
  const [status, setStatus] = useState<PopStatus>("completed");
  const [results, setResults] = useState("");
  const [compacted, setCompacted] = useState("");
  const [artifacts, setArtifacts] = useState("");
  const [decisions, setDecisions] = useState("");
  const [reason, setReason] = useState("");
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    void backend.generateResults(frame, model).then((answer) => {
      if (!live) return;
      if (answer.status === "error") {
        setGeneration({ state: "failed", error: answer.error });
        return;
      }
      const proposal = answer.data;
      setResults(proposal.results);
      setCompacted(proposal.results_compacted);
      setArtifacts(proposal.artifacts.join("\n"));
      setDecisions(proposal.decisions.join("\n"));
      setGeneration({ state: "done", criteriaMet: proposal.criteria_met });
    });
    return () => {
      live = false;
    };
  }, [backend, frame, model]);

  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const completed = status === "completed";
    const failure = await dispatch({
      kind: "pop",
      id: frame,
      request: {
        status,
        results: results.trim() === "" ? null : results,
        results_compacted: compacted.trim() === "" ? null : compacted,
        artifacts: lines(artifacts),
        decisions: lines(decisions),
        reason: completed || reason.trim() === "" ? null : reason,
      },
    });
    setBusy(false);
    if (failure === null) onClose();
    else setError(failure);
  };

  const generating = generation.state === "generating";
  return (
    <div class="dialog-backdrop" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <form
        class="dialog pop-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="pop-heading"
        data-testid="pop-dialog"
        onSubmit={(e) => void save(e)}
      >
        <h2 id="pop-heading">Pop “{title}”</h2>
        {generating && (
          <p class="muted" role="status" aria-busy="true" data-testid="pop-generating">
            The model is writing the results…
          </p>
        )}
        {generation.state === "failed" && (
          <p class="dialog-error" role="alert" data-code={generation.error.code}>
            No results were generated ({generation.error.message}). Write them below.
          </p>
        )}
        {generation.state === "done" && !generation.criteriaMet && (
          <p class="dialog-warning">
            The model judges the success criteria not met; consider popping as failed or blocked.
          </p>
        )}
        <label>
          Status
          <select
            name="status"
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value as PopStatus)}
          >
            <option value="completed">completed</option>
            <option value="failed">failed</option>
            <option value="blocked">blocked</option>
          </select>
        </label>
        {status !== "completed" && (
          <label>
            Reason
            <input name="reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
          </label>
        )}
        <label>
          Results
          <textarea
            name="results"
            rows={5}
            value={results}
            disabled={generating}
            onInput={(e) => setResults(e.currentTarget.value)}
          />
        </label>
        <label>
          Compacted results (one or two lines for distant frames)
          <textarea
            name="results_compacted"
            rows={2}
            value={compacted}
            disabled={generating}
            onInput={(e) => setCompacted(e.currentTarget.value)}
          />
        </label>
        <label>
          Artifacts (one per line)
          <textarea
            name="artifacts"
            rows={2}
            value={artifacts}
            disabled={generating}
            onInput={(e) => setArtifacts(e.currentTarget.value)}
          />
        </label>
        <label>
          Decisions (one per line)
          <textarea
            name="decisions"
            rows={2}
            value={decisions}
            disabled={generating}
            onInput={(e) => setDecisions(e.currentTarget.value)}
          />
        </label>
        <ErrorLine error={error} />
        <div class="dialog-buttons">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy || generating}>
            Pop
          </button>
        </div>
      </form>
    </div>
  );
}
