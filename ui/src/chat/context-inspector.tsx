// The context inspector: exactly what the model receives in a frame, as the backend assembled
// it (`frameContext`), with the cost of each kind of section against the budget, what the
// frame's model calls cost in money (by model, from the outline's costs), and the frame's opening
// and prompt cache: when and why the opening was made, which project instructions (AGENTS.md,
// CLAUDE.md) it starts with and when they were read, what the next call reads from the provider's
// cache and writes, and the person's way to have the opening made again; and the MCP servers whose
// tools the frame's model is offered (`mcp-servers-line.tsx`).

import { useEffect, useRef, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type {
  ApiError,
  ContextDoc_Serialize as ContextDoc,
  FrameCost_Serialize as FrameCost,
  InstructionFileReport_Serialize as InstructionFileReport,
  OpeningReport_Serialize as OpeningReport,
} from "../bindings";
import { ErrorLine } from "../error-line";
import { formatTime } from "./changes-view";
import { CostBreakdown } from "./frame-cost";
import { McpServersLine } from "./mcp-servers-line";
import {
  KIND_LABEL,
  cacheSentence,
  formatPerMille,
  formatTokens,
  inspectorNumbers,
} from "./inspector-numbers";

const STATE_LABEL = {
  full: "full",
  compacted: "compacted results",
  title_only: "title only",
  bare: "id and status only",
  dropped: "left out",
} as const;

type Load =
  { state: "loading" } | { state: "ready"; doc: ContextDoc } | { state: "failed"; error: ApiError };

/** Where the person's request to make the opening again stands, for the frame it was made in. */
type Rebuild =
  | { state: "idle" }
  | { state: "asking"; frame: string }
  | { state: "asked"; frame: string }
  | { state: "failed"; frame: string; error: ApiError };

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
  const [rebuild, setRebuild] = useState<Rebuild>({ state: "idle" });
  const [openingShown, setOpeningShown] = useState(true);
  // Reads are numbered so that only the newest one asked for is shown: one started before the
  // person asked for a new opening must not replace the read made after it.
  const reads = useRef(0);
  const shownFrame = useRef(frame);
  shownFrame.current = frame;

  const read = async (of: string): Promise<void> => {
    const number = ++reads.current;
    const answer = await backend.frameContext(of, null);
    if (number !== reads.current) return;
    setLoad(
      answer.status === "ok"
        ? { state: "ready", doc: answer.data }
        : { state: "failed", error: answer.error },
    );
  };

  useEffect(() => {
    void read(frame);
    return () => {
      reads.current++;
    };
  }, [backend, frame, seq]);

  const makeOpeningAgain = async () => {
    const of = frame;
    setRebuild({ state: "asking", frame: of });
    const asked = await backend.rebuildContext(of);
    if (asked.status === "error") {
      setRebuild({ state: "failed", frame: of, error: asked.error });
      return;
    }
    if (shownFrame.current !== of) return;
    await read(of);
    setRebuild({ state: "asked", frame: of });
    setOpeningShown(true);
  };

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
      <OpeningAndCache
        opening={doc.report.opening}
        hitPerMille={doc.report.cache_hit_per_mille}
        rebuild={rebuild.state === "idle" || rebuild.frame !== frame ? { state: "idle" } : rebuild}
        onRebuild={() => void makeOpeningAgain()}
      />
      <ProjectInstructions opening={doc.report.opening} />
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
      <McpServersLine backend={backend} frame={frame} seq={seq} />
      <details class="inspector-system" open>
        <summary>System text sent to the model</summary>
        <pre data-testid="context-system">{doc.system}</pre>
      </details>
      <details
        class="inspector-opening-text"
        open={openingShown}
        onToggle={(e) => setOpeningShown(e.currentTarget.open)}
      >
        <summary>
          Opening sent as the conversation's first message (
          {doc.report.opening.tokens.toLocaleString("en-US")} tokens)
        </summary>
        <pre data-testid="context-opening-text">{doc.xml}</pre>
      </details>
    </div>
  );
}

/**
 * The frame's opening (which one, when and why it was made), what the next call does to the
 * provider's cache, the frame's recorded cache hit rate, and "Make the opening again".
 */
function OpeningAndCache({
  opening,
  hitPerMille,
  rebuild,
  onRebuild,
}: {
  opening: OpeningReport;
  hitPerMille: number | null;
  rebuild: Rebuild;
  onRebuild: () => void;
}) {
  const tokens = `${opening.tokens.toLocaleString("en-US")} tokens`;
  return (
    <div class="inspector-cache" data-testid="context-cache">
      <p data-testid="context-opening" data-generation={opening.generation}>
        {opening.made_now ? (
          <>
            <strong>The next call makes opening {opening.generation}</strong> ({tokens}):{" "}
            {opening.reason_text}.
          </>
        ) : (
          <>
            <strong>Opening {opening.generation}</strong> ({tokens}): {opening.reason_text},{" "}
            {formatTime(opening.made_at)}.
          </>
        )}
      </p>
      <p data-testid="context-next-call">{cacheSentence(opening)}</p>
      <p class="muted" data-testid="context-hit-rate">
        {hitPerMille === null
          ? "No reply in this frame has recorded its usage yet."
          : `This frame's replies so far read ${formatPerMille(hitPerMille)} of their input from the provider's cache.`}
      </p>
      <div class="inspector-rebuild">
        <button
          type="button"
          data-testid="rebuild-opening"
          disabled={opening.made_now || rebuild.state === "asking"}
          title={
            opening.made_now
              ? "The next call makes the opening already"
              : "Show the tree as it is now at the start of this frame's next call (its cached prefix is written again)"
          }
          onClick={onRebuild}
        >
          Make the opening again
        </button>
        {/* One live region, there before anything is said in it, so the words are announced. */}
        <span role="status" data-testid="rebuild-status">
          {rebuild.state === "asked" && opening.made_now
            ? "Asked: the next call makes the opening again, as shown below."
            : ""}
        </span>
      </div>
      {rebuild.state === "failed" && <ErrorLine error={rebuild.error} testId="rebuild-error" />}
    </div>
  );
}

/**
 * The project instructions the opening starts with: each file read, whose it is and how much of
 * it was sent, and when they were read (when the opening was made, or now for the next call's).
 */
function ProjectInstructions({ opening }: { opening: OpeningReport }) {
  const files = opening.instructions;
  const when = opening.made_now
    ? "read now for the opening the next call makes"
    : `read for opening ${opening.generation}, ${formatTime(opening.made_at)}`;
  return (
    <div class="inspector-instructions inspector-cache" data-testid="context-instructions">
      {files === null ? (
        <p class="muted">
          This opening was made without reading project instructions: they are turned off in
          Settings (or the opening is older than them).
        </p>
      ) : files.length === 0 ? (
        <p class="muted">
          Project instructions: no AGENTS.md or CLAUDE.md was found for this opening ({when}).
        </p>
      ) : (
        <>
          <p>
            <strong>Project instructions</strong> ({when}):
          </p>
          <ul>
            {files.map((file) => (
              <li key={file.path} data-testid="instruction-file" data-path={file.path}>
                <code>{file.path}</code>
                {file.scope === "personal" && (
                  <span class="muted"> (yours, every workspace)</span>
                )}{" "}
                <span class={file.problem === null && file.sent === file.size ? "muted" : ""}>
                  {instructionState(file)}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

/** What was sent of one file of instructions, in words. */
function instructionState(file: InstructionFileReport): string {
  const bytes = (n: number) => `${n.toLocaleString("en-US")} bytes`;
  if (file.problem !== null) return `not read: ${file.problem}`;
  if (file.sent === file.size) return bytes(file.size);
  return `cut at the limit: ${file.sent.toLocaleString("en-US")} of ${bytes(file.size)} sent`;
}
