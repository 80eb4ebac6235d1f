// Export…: a frame, its subtree or its whole tree as Markdown or JSON, or the frame's assembled
// context, written to a file the person names (typed, or chosen in the system's save dialog,
// which the backend opens). The backend writes the file and reports the frames it has read; the
// dialog shows that progress, then where the file went or why it could not be written.

import { useEffect, useRef, useState } from "preact/hooks";

import type { Answer, Backend } from "./backend";
import type { ApiError, ExportProgress, ExportScope, ExportSummary } from "./bindings";
import { ModalDialog } from "./dialog";
import { ErrorLine } from "./error-line";

/** What is written: the frames in one of two formats, or the frame's assembled context. */
export type ExportKind = "markdown" | "json" | "context";

const KINDS: { value: ExportKind; label: string }[] = [
  { value: "markdown", label: "Markdown (for reading)" },
  { value: "json", label: "JSON (Flame imports it back)" },
  { value: "context", label: "Assembled context (what the model receives)" },
];

const SCOPES: { value: ExportScope; label: string }[] = [
  { value: "frame", label: "This frame" },
  { value: "subtree", label: "Its subtree" },
  { value: "tree", label: "The whole tree" },
];

type Phase =
  | { state: "editing"; error: ApiError | null }
  | { state: "exporting"; progress: ExportProgress | null }
  | { state: "done"; kind: ExportKind; summary: ExportSummary };

/** A file name made of a title's letters and digits, lower case, joined by dashes. */
export function slugify(title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return slug === "" ? "flame-export" : slug;
}

/** The file suggested for an export: in the home folder, named after what is exported. */
export function defaultPath(kind: ExportKind, title: string): string {
  const slug = slugify(title);
  switch (kind) {
    case "markdown":
      return `~/${slug}.md`;
    case "json":
      return `~/${slug}.json`;
    case "context":
      return `~/${slug}-context.md`;
  }
}

function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

export function ExportDialog({
  backend,
  frame,
  treeTitle,
  onClose,
}: {
  backend: Pick<Backend, "exportFrames" | "exportContext" | "chooseSavePath">;
  frame: { id: string; title: string };
  treeTitle: string;
  onClose: () => void;
}) {
  const [scope, setScope] = useState<ExportScope>("subtree");
  const [kind, setKind] = useState<ExportKind>("markdown");
  const suggested = defaultPath(
    kind,
    scope === "tree" && kind !== "context" ? treeTitle : frame.title,
  );
  // Until the person types or chooses a path, the suggestion follows the choices above it.
  const [typed, setTyped] = useState<string | null>(null);
  const path = typed ?? suggested;
  const [phase, setPhase] = useState<Phase>({ state: "editing", error: null });
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const choose = async () => {
    const name = path.split("/").pop() ?? "";
    const chosen = await backend.chooseSavePath(name === "" ? suggested.slice(2) : name);
    if (chosen.status === "error") setPhase({ state: "editing", error: chosen.error });
    else if (chosen.data !== null) setTyped(chosen.data);
  };

  const submit = async () => {
    setPhase({ state: "exporting", progress: null });
    const answer: Answer<ExportSummary> =
      kind === "context"
        ? await backend.exportContext(frame.id, path)
        : await backend.exportFrames(frame.id, scope, kind, path, (progress) =>
            setPhase({ state: "exporting", progress }),
          );
    setPhase(
      answer.status === "ok"
        ? { state: "done", kind, summary: answer.data }
        : { state: "editing", error: answer.error },
    );
  };

  const editing = phase.state === "editing";
  return (
    <ModalDialog
      heading="Export"
      testId="export-dialog"
      className="export-dialog"
      onEscape={() => phase.state !== "exporting" && onClose()}
      onSubmit={() => (phase.state === "done" ? onClose() : void submit())}
    >
      <p class="dialog-frame muted">
        From “{frame.title}” <code>{frame.id}</code>
      </p>
      <Choice
        legend="What"
        name="kind"
        options={KINDS}
        value={kind}
        disabled={!editing}
        onChange={setKind}
      />
      <Choice
        legend="Frames"
        name="scope"
        options={SCOPES}
        value={scope}
        disabled={!editing || kind === "context"}
        onChange={setScope}
      />
      <label>
        Save to (a full path; ~ is your home folder; an existing file is replaced)
        <span class="path-row">
          <input
            ref={input}
            name="path"
            value={path}
            disabled={!editing}
            spellcheck={false}
            onInput={(e) => setTyped(e.currentTarget.value)}
          />
          <button
            type="button"
            data-testid="choose-path"
            disabled={!editing}
            onClick={() => void choose()}
          >
            Choose…
          </button>
        </span>
      </label>
      {phase.state === "exporting" && <Progress progress={phase.progress} />}
      {phase.state === "editing" && <ErrorLine error={phase.error} />}
      {phase.state === "done" && (
        <p class="export-result" role="status" data-testid="export-result">
          {phase.kind === "context"
            ? `Exported the context (${count(phase.summary.frames, "frame", "frames")} described, ${count(phase.summary.messages, "message", "messages")}) to ${phase.summary.path}`
            : `Exported ${count(phase.summary.frames, "frame", "frames")} (${count(phase.summary.messages, "message", "messages")}) to ${phase.summary.path}`}
        </p>
      )}
      <div class="dialog-buttons">
        {phase.state !== "done" && (
          // An export cannot be stopped halfway; it is quick, and its file appears whole or
          // not at all.
          <button type="button" disabled={phase.state === "exporting"} onClick={onClose}>
            Cancel
          </button>
        )}
        <button
          type="submit"
          class="primary"
          data-testid="export-submit"
          disabled={phase.state === "exporting" || (editing && path.trim() === "")}
        >
          {phase.state === "done" ? "Close" : "Export"}
        </button>
      </div>
    </ModalDialog>
  );
}

/** One of a few options, as a group of radio buttons. */
function Choice<T extends string>({
  legend,
  name,
  options,
  value,
  disabled,
  onChange,
}: {
  legend: string;
  name: string;
  options: { value: T; label: string }[];
  value: T;
  disabled: boolean;
  onChange: (value: T) => void;
}) {
  return (
    <fieldset disabled={disabled}>
      <legend>{legend}</legend>
      {options.map((option) => (
        <label class="inline-check" key={option.value}>
          <input
            type="radio"
            name={name}
            value={option.value}
            checked={value === option.value}
            onChange={() => onChange(option.value)}
          />
          {option.label}
        </label>
      ))}
    </fieldset>
  );
}

function Progress({ progress }: { progress: ExportProgress | null }) {
  return (
    <div class="export-progress" role="status" data-testid="export-progress">
      {progress === null ? (
        <>
          <progress />
          <span>Exporting…</span>
        </>
      ) : (
        <>
          <progress value={progress.frames_done} max={progress.frames_total} />
          <span>
            Read {progress.frames_done.toLocaleString("en-US")} of{" "}
            {count(progress.frames_total, "frame", "frames")}
          </span>
        </>
      )}
    </div>
  );
}
