// A frame's changes: the files its tool calls (and, when asked, its descendants') changed in the
// workspace since it started, as the backend diffed them from its checkpoints (`frameChanges`),
// and the rollback the backend offers for them. The view decides nothing itself: the span, the
// files, the diff, whether a rollback is offered and why not all come from the backend, and a
// refused rollback shows the backend's message, which names the files and who changed them.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type {
  ApiError,
  ChangedFile,
  FileChangeKind,
  FrameChanges_Serialize as FrameChanges,
  RollbackOffer,
  RollbackOutcome_Serialize as RollbackOutcome,
} from "../bindings";
import { DialogButtons } from "../dialog";
import { ErrorLine } from "../error-line";
import type { RunCommand } from "../frame-actions";
import { CodeBlock } from "./code-block";

/** How each kind of change reads in the file list. */
export const CHANGE_LABEL: Record<FileChangeKind, string> = {
  added: "added",
  modified: "modified",
  deleted: "deleted",
  mode_changed: "mode changed",
  type_changed: "type changed",
  not_snapshotted: "not snapshotted",
};

/** A time the backend sent (milliseconds since the epoch), in the person's own format. */
export function formatTime(ms: number): string {
  return new Date(ms).toLocaleString();
}

/**
 * Git's unified diff cut at each file's `diff --git` line, so each file is highlighted on its own
 * (and a long diff is not one block past the highlighter's limit). Text before the first file,
 * if any, is kept as a part of its own.
 */
export function splitPatch(patch: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let at = patch.startsWith("diff --git ") ? 0 : patch.indexOf("\ndiff --git ");
  while (at >= 0) {
    const cut = patch[at] === "\n" ? at + 1 : at;
    if (cut > start) parts.push(patch.slice(start, cut));
    start = cut;
    at = patch.indexOf("\ndiff --git ", cut);
  }
  if (start < patch.length) parts.push(patch.slice(start));
  return parts.filter((part) => part.trim() !== "");
}

type Load =
  | { state: "loading" }
  | { state: "ready"; changes: FrameChanges }
  | { state: "failed"; error: ApiError };

/**
 * The changes of `frame` (with its descendants' when `subtree`), read again whenever `seq` (the
 * tree's newest change) or `again` moves.
 */
export function useFrameChanges(
  backend: Backend,
  frame: string,
  subtree: boolean,
  seq: number,
  again = 0,
  enabled = true,
): Load {
  const [load, setLoad] = useState<Load>({ state: "loading" });
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    void backend.frameChanges(frame, subtree).then((answer) => {
      if (!live) return;
      setLoad(
        answer.status === "ok"
          ? { state: "ready", changes: answer.data }
          : { state: "failed", error: answer.error },
      );
    });
    return () => {
      live = false;
    };
  }, [backend, frame, subtree, seq, again, enabled]);
  // Another frame's answer is never shown as this one's.
  if (load.state === "ready" && load.changes.frame !== frame) return { state: "loading" };
  return load;
}

function FileRow({ file }: { file: ChangedFile }) {
  return (
    <li data-testid="changed-file" data-path={file.path} data-change={file.change}>
      <span class={`change-kind change-${file.change}`}>{CHANGE_LABEL[file.change]}</span>{" "}
      {file.old_path !== null && (
        <>
          <code>{file.old_path}</code> →{" "}
        </>
      )}
      <code>{file.path}</code>{" "}
      {file.binary ? (
        <span class="muted">binary</span>
      ) : (
        <span class="line-counts">
          <span class="lines-added">+{file.added_lines}</span>{" "}
          <span class="lines-removed">−{file.removed_lines}</span>
        </span>
      )}
    </li>
  );
}

/** The span the diff covers, in words. */
function spanText(changes: FrameChanges): string {
  const since =
    changes.since === null ? "since it started" : `since it started (${formatTime(changes.since)})`;
  const until = changes.until === null ? "to now" : `until it ended (${formatTime(changes.until)})`;
  return `${changes.subtree ? "Its and its descendants' changes" : "Its changes"} ${since} ${until}.`;
}

type Rollback =
  | { state: "idle" }
  | { state: "confirming" }
  | { state: "busy" }
  | { state: "done"; outcome: RollbackOutcome }
  | { state: "refused"; error: ApiError };

function OutcomeList({ label, paths, testId }: { label: string; paths: string[]; testId: string }) {
  if (paths.length === 0) return null;
  return (
    <li data-testid={testId}>
      {label}:{" "}
      {paths.map((path, i) => (
        <span key={path}>
          {i > 0 && ", "}
          <code>{path}</code>
        </span>
      ))}
    </li>
  );
}

/** What a rollback did, file by file. */
function OutcomeView({ outcome }: { outcome: RollbackOutcome }) {
  const touched =
    outcome.restored.length +
    outcome.deleted.length +
    outcome.unchanged.length +
    outcome.not_restored.length;
  return (
    <div class="rollback-outcome" role="status" data-testid="rollback-outcome">
      <p>Rolled back.{touched === 0 ? " No file needed putting back." : ""}</p>
      <ul>
        <OutcomeList label="Put back" paths={outcome.restored} testId="rollback-restored" />
        <OutcomeList label="Removed" paths={outcome.deleted} testId="rollback-deleted" />
        <OutcomeList
          label="Already as they were"
          paths={outcome.unchanged}
          testId="rollback-unchanged"
        />
        <OutcomeList
          label="Not put back (not snapshotted when it started)"
          paths={outcome.not_restored}
          testId="rollback-not-restored"
        />
      </ul>
    </div>
  );
}

/** The question asked before rolling back a frame the backend offers only on request. */
export function confirmText(files: number): string {
  const what = files === 1 ? "the file" : `the ${files} files`;
  return `Put back ${what} this frame changed as they were when it started? Later work is never overwritten: Flame refuses if another frame changed them since.`;
}

/** The rollback the backend offers, its confirmation, and what came of it. */
function RollbackControls({
  offer,
  files,
  rollback,
  onAsk,
  onCancel,
  onRollBack,
}: {
  offer: RollbackOffer;
  files: number;
  rollback: Rollback;
  onAsk: () => void;
  onCancel: () => void;
  onRollBack: () => void;
}) {
  return (
    <div class="rollback" data-testid="rollback" data-offer={offer.kind}>
      {offer.kind === "offered" && (
        <button
          type="button"
          class="primary"
          data-testid="rollback-button"
          disabled={rollback.state === "busy"}
          onClick={onRollBack}
        >
          Roll back
        </button>
      )}
      {offer.kind === "on_request" && rollback.state !== "confirming" && (
        <button
          type="button"
          data-testid="rollback-button"
          disabled={rollback.state === "busy"}
          onClick={onAsk}
        >
          Roll back…
        </button>
      )}
      {offer.kind === "on_request" && rollback.state === "confirming" && (
        <div
          class="rollback-confirm"
          role="group"
          aria-label="Roll back"
          data-testid="rollback-confirm"
        >
          <p>{confirmText(files)}</p>
          <DialogButtons onCancel={onCancel}>
            <button
              type="button"
              class="primary"
              data-testid="rollback-confirm-button"
              onClick={onRollBack}
            >
              Roll back
            </button>
          </DialogButtons>
        </div>
      )}
      {offer.kind === "unavailable" && offer.reason !== "" && (
        <p class="muted" data-testid="rollback-unavailable">
          {offer.reason}
        </p>
      )}
      {rollback.state === "refused" && (
        <ErrorLine
          error={rollback.error}
          testId="rollback-refusal"
          className="rollback-refusal error-message"
          preformatted
        />
      )}
      {rollback.state === "done" && <OutcomeView outcome={rollback.outcome} />}
    </div>
  );
}

/**
 * The Changes panel, in place of the conversation while it is open. It reads the frame's
 * changes again whenever `seq` moves, so it follows the frame while it runs.
 */
export function ChangesView({
  backend,
  frame,
  seq,
  run,
  onClose,
}: {
  backend: Backend;
  frame: string;
  seq: number;
  /** Runs the rollback's command: the tree reloads, and the refusal is shown here. */
  run: RunCommand;
  onClose: () => void;
}) {
  const [subtree, setSubtree] = useState(false);
  const [again, setAgain] = useState(0);
  const [rollback, setRollback] = useState<Rollback>({ state: "idle" });
  const load = useFrameChanges(backend, frame, subtree, seq, again);

  // What a rollback said belongs to the frame it was asked for.
  useEffect(() => setRollback({ state: "idle" }), [frame]);

  const rollBack = async () => {
    setRollback({ state: "busy" });
    const call = backend.rollbackFrame(frame);
    await run(call);
    const answer = await call;
    setRollback(
      answer.status === "ok"
        ? { state: "done", outcome: answer.data }
        : { state: "refused", error: answer.error },
    );
    setAgain((n) => n + 1);
  };

  return (
    <div class="changes-view" data-testid="changes-view" data-frame-id={frame}>
      <div class="changes-bar">
        <button type="button" class="link-button" data-testid="changes-back" onClick={onClose}>
          ← Conversation
        </button>
        <label class="inline-check">
          <input
            type="checkbox"
            name="changes_subtree"
            data-testid="changes-subtree"
            checked={subtree}
            onChange={(e) => setSubtree(e.currentTarget.checked)}
          />
          Include its descendants' changes
        </label>
      </div>
      {load.state === "loading" && <p class="muted">Reading the changes…</p>}
      {load.state === "failed" && <ErrorLine error={load.error} className="error-message" />}
      {load.state === "ready" && (
        <ChangesBody
          changes={load.changes}
          rollback={rollback}
          onAsk={() => setRollback({ state: "confirming" })}
          onCancel={() => setRollback({ state: "idle" })}
          onRollBack={() => void rollBack()}
        />
      )}
    </div>
  );
}

function ChangesBody({
  changes,
  rollback,
  onAsk,
  onCancel,
  onRollBack,
}: {
  changes: FrameChanges;
  rollback: Rollback;
  onAsk: () => void;
  onCancel: () => void;
  onRollBack: () => void;
}) {
  const parts = splitPatch(changes.patch);
  return (
    <>
      <p class="changes-span muted" data-testid="changes-span">
        {spanText(changes)}
      </p>
      {changes.rolled_back_at !== null && (
        <p class="changes-rolled-back" data-testid="changes-rolled-back">
          ↶ Rolled back {formatTime(changes.rolled_back_at)}.
        </p>
      )}
      <RollbackControls
        offer={changes.roll_back}
        files={changes.files.length}
        rollback={rollback}
        onAsk={onAsk}
        onCancel={onCancel}
        onRollBack={onRollBack}
      />
      {changes.unavailable !== null ? (
        <p class="changes-unavailable" data-testid="changes-unavailable">
          {changes.unavailable}
        </p>
      ) : changes.files.length === 0 ? (
        <p class="muted" data-testid="changes-none">
          No file changed.
        </p>
      ) : (
        <>
          <ul class="changed-files" aria-label="Files changed" data-testid="changed-files">
            {changes.files.map((file) => (
              <FileRow key={file.path} file={file} />
            ))}
          </ul>
          <div class="changes-diff" data-testid="changes-diff">
            {parts.map((part, i) => (
              <CodeBlock
                key={i}
                text={part.endsWith("\n") ? part.slice(0, -1) : part}
                language="diff"
              />
            ))}
            {changes.truncated && (
              <p class="changes-truncated muted" data-testid="changes-truncated">
                The diff is cut here: it is longer than Flame shows.
              </p>
            )}
          </div>
        </>
      )}
    </>
  );
}
