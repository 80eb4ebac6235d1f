// Popping a frame from the chat: the model proposes the hand-off (`generateResults`), the person
// reads and edits it, and `popFrame` saves what the person kept. When no proposal can be made
// (no model, a failed call), the person writes the results.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type { ApiError, PopStatus } from "../bindings";
import { DialogButtons, ModalDialog } from "../dialog";
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

  const save = async () => {
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
  // The hand-off's texts, which the proposal fills and the person edits once it is written.
  const handoffText = (
    label: string,
    name: string,
    rows: number,
    value: string,
    onValue: (value: string) => void,
  ) => (
    <label>
      {label}
      <textarea
        name={name}
        rows={rows}
        value={value}
        disabled={generating}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </label>
  );
  return (
    <ModalDialog
      heading={`Pop “${title}”`}
      testId="pop-dialog"
      className="pop-dialog"
      onEscape={onClose}
      onSubmit={() => void save()}
    >
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
      {handoffText("Results", "results", 5, results, setResults)}
      {handoffText(
        "Compacted results (one or two lines for distant frames)",
        "results_compacted",
        2,
        compacted,
        setCompacted,
      )}
      {handoffText("Artifacts (one per line)", "artifacts", 2, artifacts, setArtifacts)}
      {handoffText("Decisions (one per line)", "decisions", 2, decisions, setDecisions)}
      <ErrorLine error={error} />
      <DialogButtons onCancel={onClose}>
        <button type="submit" class="primary" disabled={busy || generating}>
          Pop
        </button>
      </DialogButtons>
    </ModalDialog>
  );
}
