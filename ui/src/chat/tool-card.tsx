// A workspace tool's result as a card: what it did, in one line (the range read, the hits found,
// the file changed, the command's exit and where it ran: in the sandbox or outside it), and what
// came of it below (the diff highlighted; the hit lines and a command's output collapsed). The card is drawn from the result's `detail`; its
// text (what the model read) is untrusted and goes into text nodes or the highlighter only.

import type { CommandPlace, ToolDetail } from "../bindings";
import { CodeBlock } from "./code-block";

/** `count` with the noun, singular or plural: "1 file", "3 files". */
export function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}

/** A duration for people: milliseconds under a second, then seconds, then minutes and seconds. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A size in bytes for people. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return counted(bytes, "byte");
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * Where a command ran, in words: in the sandbox (with the network or without) or outside it.
 * Results stored before there was a sandbox say nothing (they ran outside it).
 */
export function placeText(place: CommandPlace | null | undefined): string | null {
  if (place === null || place === undefined) return null;
  if (place.kind === "outside") return "outside the sandbox";
  return place.network ? "in the sandbox, with the network" : "in the sandbox";
}

/** The card's one line: what the tool did, from its detail. */
export function toolSummary(detail: ToolDetail): string {
  switch (detail.kind) {
    case "read": {
      // The generated type lets the length be left out; that reads as unknown.
      const total = detail.total_lines ?? null;
      if (total === 0) return `Read ${detail.path} (empty)`;
      const of = total === null ? "" : ` of ${total}`;
      return `Read ${detail.path} lines ${detail.first_line}–${detail.last_line}${of}`;
    }
    case "list":
      return `Listed ${counted(detail.count, "file")}${detail.truncated ? " (more not listed)" : ""}`;
    case "search":
      return `${counted(detail.hits, "hit")} in ${counted(detail.files, "file")}${
        detail.truncated ? " (stopped at the cap)" : ""
      }`;
    case "change":
      return `${detail.created ? "Created" : "Edited"} ${detail.path}`;
    case "command": {
      const place = placeText(detail.place);
      return place === null ? "Ran a command" : `Ran a command ${place}`;
    }
  }
}

/** How a command ended: "exit 0", "exit 2", or the ending in words when no code came back. */
function CommandExit({ detail }: { detail: Extract<ToolDetail, { kind: "command" }> }) {
  const code = detail.exit_code ?? null;
  return (
    <span
      class={`tool-exit ${code === 0 ? "tool-exit-ok" : "tool-exit-failed"}`}
      data-testid="tool-exit"
      data-exit-code={code ?? undefined}
    >
      {code === null ? detail.ending : `exit ${code}`}
    </span>
  );
}

/** The text of a result folded away under `label`, open on a click. */
function Collapsed({ label, text }: { label: string; text: string }) {
  if (text === "") return null;
  return (
    <details class="tool-output" data-testid="tool-output">
      <summary>{label}</summary>
      <pre>{text}</pre>
    </details>
  );
}

/** A failed call's error, in plain sight. */
function ToolError({ content }: { content: string }) {
  return (
    <pre class="tool-error-text" data-testid="tool-error">
      {content}
    </pre>
  );
}

/**
 * What the card shows under its line, by kind. A failed call shows its error where the result
 * would be (a command still shows what ran and how it ended).
 */
function ToolBody({
  detail,
  content,
  isError,
}: {
  detail: ToolDetail;
  content: string;
  isError: boolean;
}) {
  if (isError && detail.kind !== "command") return <ToolError content={content} />;
  switch (detail.kind) {
    case "read":
      return <Collapsed label="Lines read" text={content} />;
    case "list":
      return <Collapsed label="Files" text={content} />;
    case "search":
      return <Collapsed label="Hit lines" text={content} />;
    case "change":
      return (
        <div class="tool-diff" data-testid="tool-diff">
          <CodeBlock text={detail.diff} language="diff" />
        </div>
      );
    case "command":
      return (
        <>
          <div class="tool-command" data-testid="tool-command">
            <CodeBlock text={detail.command} language="bash" />
          </div>
          <p class="tool-facts muted">
            <CommandExit detail={detail} /> · {formatDuration(detail.duration_ms)} ·{" "}
            {formatBytes(detail.output_bytes)} of output
            {(detail.place ?? null) !== null && (
              <>
                {" · "}
                <span
                  class={`tool-place tool-place-${detail.place?.kind ?? ""}`}
                  data-testid="tool-place"
                  data-place={detail.place?.kind}
                >
                  {placeText(detail.place)}
                </span>
              </>
            )}
          </p>
          {isError ? (
            <ToolError content={content} />
          ) : (
            <Collapsed label="Output (head and tail)" text={content} />
          )}
          {(detail.output_file ?? null) !== null && (
            <p class="tool-output-file muted" data-testid="tool-output-file">
              Whole output: <code>{detail.output_file}</code>
            </p>
          )}
        </>
      );
  }
}

/** A workspace tool's result: `name` ran with `detail`, and the model read `content`. */
export function ToolCard({
  name,
  content,
  detail,
  isError,
}: {
  name: string;
  content: string;
  detail: ToolDetail;
  isError: boolean;
}) {
  return (
    <div
      class={`tool-card tool-detail tool-${detail.kind}${isError ? " tool-error" : ""}`}
      data-testid="tool-card"
      data-kind={detail.kind}
      data-tool={name}
      data-error={isError ? "true" : undefined}
    >
      <p class="tool-line">
        <span class="muted" aria-hidden="true">
          {isError ? "✗" : "↳"}
        </span>{" "}
        <strong>{name}</strong> <span data-testid="tool-summary">{toolSummary(detail)}</span>
      </p>
      <ToolBody detail={detail} content={content} isError={isError} />
    </div>
  );
}
