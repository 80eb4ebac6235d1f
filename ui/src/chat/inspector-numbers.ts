// The context inspector's arithmetic, kept pure so its numbers are tested. Every figure comes
// from the backend's ContextReport; this only adds up sections by kind and formats.

import type {
  ContextReport_Serialize as ContextReport,
  OpeningReport_Serialize as OpeningReport,
  SectionKind,
  Section_Serialize as Section,
} from "../bindings";

export const SECTION_KINDS: readonly SectionKind[] = [
  "preamble",
  "instructions",
  "ancestor",
  "relative",
  "sibling",
  "child",
  "history",
];

export const KIND_LABEL: Record<SectionKind, string> = {
  preamble: "Preamble",
  instructions: "Instructions",
  ancestor: "Ancestors",
  relative: "Relatives",
  sibling: "Siblings",
  child: "Children",
  history: "Messages",
};

/** One stripe of the stacked bar: a section kind, its tokens and its share of the budget. */
export interface Stripe {
  kind: SectionKind;
  tokens: number;
  /** Percent of the bar, which is the budget (or the total, when the total is over budget). */
  percent: number;
}

export interface InspectorNumbers {
  stripes: Stripe[];
  /** Sections that were shrunk or left out, in document order. */
  changed: Section[];
  total: number;
  budget: number;
  linear: number;
  /** Tokens a linear chat would send beyond Flame's context (never negative). */
  saved: number;
  /** How many times smaller Flame's context is than the linear chat's, when it is smaller. */
  ratio: number | null;
}

export function inspectorNumbers(report: ContextReport): InspectorNumbers {
  const byKind = new Map<SectionKind, number>();
  for (const section of report.sections) {
    if (section.state === "dropped") continue;
    byKind.set(section.kind, (byKind.get(section.kind) ?? 0) + section.tokens);
  }
  const scale = Math.max(report.budget, report.total_tokens, 1);
  const stripes = SECTION_KINDS.filter((kind) => (byKind.get(kind) ?? 0) > 0).map((kind) => {
    const tokens = byKind.get(kind) ?? 0;
    return { kind, tokens, percent: (tokens / scale) * 100 };
  });
  return {
    stripes,
    changed: report.sections.filter((s) => s.state !== "full"),
    total: report.total_tokens,
    budget: report.budget,
    linear: report.linear_tokens,
    saved: Math.max(0, report.linear_tokens - report.total_tokens),
    ratio:
      report.total_tokens > 0 && report.linear_tokens > report.total_tokens
        ? report.linear_tokens / report.total_tokens
        : null,
  };
}

/** Tokens as a person reads them: 950, 3.2k, 41k, 1.2M. */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  if (tokens < 10_000) return `${trim((tokens / 1000).toFixed(1))}k`;
  if (tokens < 1_000_000) return `${Math.round(tokens / 1000)}k`;
  return `${trim((tokens / 1_000_000).toFixed(1))}M`;
}

function trim(fixed: string): string {
  return fixed.endsWith(".0") ? fixed.slice(0, -2) : fixed;
}

/** `count` with its noun, singular or plural: "1 frame", "3 frames". */
function counted(count: number, one: string, many: string): string {
  return `${count.toLocaleString("en-US")} ${count === 1 ? one : many}`;
}

/**
 * What the next call does to the provider's cache, in the backend's figures: what it reads from
 * the cache and writes to it, the note it appends and the results it masks.
 */
export function cacheSentence(opening: OpeningReport): string {
  const parts = [
    `reads about ${formatTokens(opening.cache_read_tokens)} tokens from the provider's cache and writes about ${formatTokens(opening.cache_written_tokens)}`,
  ];
  if (opening.noted_frames > 0) {
    parts.push(
      `appends a note on ${counted(opening.noted_frames, "frame", "frames")} that changed`,
    );
  }
  if (opening.newly_masked > 0) {
    parts.push(`masks ${counted(opening.newly_masked, "older tool result", "older tool results")}`);
  }
  return `The next call ${parts.join("; ")}.`;
}

/** Thousandths as a percentage with one decimal: 873 as "87.3%". */
export function formatPerMille(perMille: number): string {
  return `${(perMille / 10).toFixed(1)}%`;
}
