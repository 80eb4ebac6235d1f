// File → Import: a path, the backend's progress while it reads, and what it imported. The path
// is typed: it works everywhere and is what scripts and the e2e tests use too. (Export's save
// dialog shows how a native open dialog could be added: opened by a command in Rust.)

import { useEffect, useRef, useState } from "preact/hooks";

import type { ApiError, ImportProgress, ImportSummary } from "./bindings";
import { DialogButtons, ModalDialog } from "./dialog";
import { ErrorLine } from "./error-line";

type Phase =
  | { state: "editing"; error: ApiError | null }
  | { state: "reading"; progress: ImportProgress | null }
  | { state: "done"; summary: ImportSummary };

export function ImportForm({
  onImport,
  onClose,
}: {
  onImport: (
    path: string,
    onProgress: (progress: ImportProgress) => void,
  ) => Promise<{ status: "ok"; data: ImportSummary } | { status: "error"; error: ApiError }>;
  onClose: () => void;
}) {
  const [path, setPath] = useState("");
  const [phase, setPhase] = useState<Phase>({ state: "editing", error: null });
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const submit = async () => {
    setPhase({ state: "reading", progress: null });
    const answer = await onImport(path, (progress) => setPhase({ state: "reading", progress }));
    setPhase(
      answer.status === "ok"
        ? { state: "done", summary: answer.data }
        : { state: "editing", error: answer.error },
    );
  };

  return (
    <ModalDialog
      heading="Import a session"
      testId="import-form"
      onEscape={onClose}
      onSubmit={() => (phase.state === "done" ? onClose() : void submit())}
    >
      <label>
        A Claude Code session (.jsonl), an OpenCode data folder or opencode.db, or a Flame export
        (.json)
        <input
          ref={input}
          name="path"
          value={path}
          disabled={phase.state !== "editing"}
          onInput={(e) => setPath(e.currentTarget.value)}
          placeholder="~/.claude/projects/…/session.jsonl"
        />
      </label>
      {phase.state === "reading" && (
        <p class="import-progress" role="status" data-testid="import-progress">
          {phase.progress === null
            ? "Reading…"
            : `Reading ${phase.progress.file}: ${percent(phase.progress)}%`}
        </p>
      )}
      {phase.state === "editing" && <ErrorLine error={phase.error} />}
      {phase.state === "done" && <Summary summary={phase.summary} />}
      <DialogButtons onCancel={phase.state === "done" ? undefined : onClose}>
        <button
          type="submit"
          class="primary"
          disabled={phase.state === "reading" || (phase.state === "editing" && path.trim() === "")}
        >
          {phase.state === "done" ? "Close" : "Import"}
        </button>
      </DialogButtons>
    </ModalDialog>
  );
}

function percent(progress: ImportProgress): number {
  if (progress.total_bytes === 0) return 100;
  return Math.floor((progress.bytes_read * 100) / progress.total_bytes);
}

function Summary({ summary }: { summary: ImportSummary }) {
  return (
    <div class="import-summary" role="status" data-testid="import-summary">
      <p>
        Imported “{summary.tree.title}”: {summary.frames} frames, {summary.messages} messages.
      </p>
      {summary.problem_count > 0 && (
        <details>
          <summary>
            {summary.problem_count} part{summary.problem_count === 1 ? "" : "s"} could not be read
            or had to be changed to fit; the rest was imported
          </summary>
          <ul>
            {summary.problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
