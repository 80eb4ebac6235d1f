// A frame's success criteria and results in the chat pane's header, kept short: a finished
// frame's results can run to pages (an imported subagent's whole report), and shown whole they
// would push the conversation and the context inspector out of the pane. The header shows the
// compacted results, or the first lines, with Show all; the rest is a click away.

import { useState } from "preact/hooks";

import { Markdown } from "./markdown";

/** How much of a text the header shows before Show all. */
export interface PreviewLimits {
  /** Lines that hold something; blank lines between them are kept but not counted. */
  lines: number;
  /** Characters in all, so that one enormous line is cut too. */
  chars: number;
}

/** Results: a paragraph, or a heading and the head of a list. */
export const RESULTS_PREVIEW: PreviewLimits = { lines: 3, chars: 320 };

/** Criteria: most are a sentence; a long one keeps its first lines. */
export const CRITERIA_PREVIEW: PreviewLimits = { lines: 2, chars: 200 };

/** The head of a text and whether anything was left out. */
export interface Preview {
  text: string;
  cut: boolean;
}

/**
 * The first lines of `text` within `limits`, cut at a word boundary when a line runs past the
 * character limit, ending with "…" when something was left out. It reads only as far as the
 * limits reach, so a text of any length costs the same.
 */
export function preview(text: string, limits: PreviewLimits): Preview {
  let at = 0;
  let lines = 0;
  while (at < text.length) {
    const newline = text.indexOf("\n", at);
    const end = newline < 0 ? text.length : newline;
    if (end > limits.chars) {
      // This line runs past the limit: cut it at its last space that keeps at least half of
      // what would fit, else after the line before when that keeps as much, else mid-word.
      const space = text.slice(0, limits.chars).search(/\s\S*$/);
      const half = limits.chars / 2;
      const cutAt = space > at && space > half ? space : at > half ? at : limits.chars;
      return { text: `${text.slice(0, cutAt).trimEnd()}…`, cut: true };
    }
    if (text.slice(at, end).trim() !== "") lines += 1;
    at = end + 1;
    if (lines === limits.lines) {
      // Anything but white space after this line is left out.
      const more = /\S/g;
      more.lastIndex = at;
      return more.test(text)
        ? { text: `${text.slice(0, end).trimEnd()}…`, cut: true }
        : { text, cut: false };
    }
  }
  return { text, cut: false };
}

/** How many lines `text` has, for the Show all button. */
function lineCount(text: string): number {
  let count = 1;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count += 1;
  return count;
}

/** Show all or Show less, saying how long the whole is. */
function ToggleButton({
  open,
  whole,
  onToggle,
  testid,
}: {
  open: boolean;
  whole: string;
  onToggle: () => void;
  testid: string;
}) {
  const lines = lineCount(whole);
  return (
    <button
      type="button"
      class="link-button show-all"
      aria-expanded={open}
      data-testid={testid}
      onClick={onToggle}
    >
      {open ? "Show less" : `Show all (${lines} ${lines === 1 ? "line" : "lines"})`}
    </button>
  );
}

/** The frame's success criteria: the first lines, or all of them once asked for. */
export function FrameCriteria({ criteria }: { criteria: string }) {
  const [open, setOpen] = useState(false);
  const short = preview(criteria, CRITERIA_PREVIEW);
  return (
    <p class="criteria" data-testid="frame-criteria" data-cut={short.cut && !open}>
      <span class="muted">Done when: </span>
      {open || !short.cut ? criteria : short.text}
      {short.cut && (
        <>
          {" "}
          <ToggleButton
            open={open}
            whole={criteria}
            onToggle={() => setOpen(!open)}
            testid="criteria-toggle"
          />
        </>
      )}
    </p>
  );
}

/**
 * The frame's results: whole when they fit, else the compacted results when the frame has them,
 * else the first lines; Show all shows them whole, and Show less (above and below them) goes
 * back.
 */
export function FrameResults({
  results,
  compacted,
}: {
  results: string;
  compacted: string | null;
}) {
  const [open, setOpen] = useState(false);
  // Results that fit are shown whole; longer ones by their compacted form when there is one.
  const head = preview(results, RESULTS_PREVIEW);
  const summary =
    head.cut && compacted !== null && compacted.trim() !== "" && compacted.length < results.length
      ? { text: compacted, cut: true, compacted: true }
      : { ...head, compacted: false };
  const toggle = () => setOpen(!open);
  return (
    <div
      class="frame-results"
      data-testid="frame-results"
      data-shown={!summary.cut ? "whole" : open ? "all" : summary.compacted ? "compacted" : "head"}
    >
      <div class="frame-results-label">
        <span class="muted">
          Results{summary.cut && !open && summary.compacted ? " (compacted)" : ""}:
        </span>
        {summary.cut && (
          <ToggleButton open={open} whole={results} onToggle={toggle} testid="results-toggle" />
        )}
      </div>
      <Markdown text={open || !summary.cut ? results : summary.text} />
      {open && (
        <ToggleButton open={open} whole={results} onToggle={toggle} testid="results-toggle-end" />
      )}
    </div>
  );
}
