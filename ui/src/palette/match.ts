// The command palette's matching: the query's characters must appear in a label in order, not
// necessarily together ("sett" finds "Settings…", "ctxi" finds "Context inspector"), and the
// labels are ranked by how well they match. The scoring is fzy's (github.com/jhawthorn/fzy,
// MIT): a match at the start of a word or right after the previous one is worth most, and every
// character skipped costs a little, so "pop" ranks "Pop…" above "Open a frame's parent". It is
// one pass of dynamic programming over query × label, with both cut to a stated length, so a
// keystroke costs at most MAX_QUERY × MAX_TEXT steps per label.

/** Characters of the query that are matched; the rest is ignored. */
export const MAX_QUERY = 64;
/** Characters of a label that are matched against; the rest is never found. */
export const MAX_TEXT = 256;

const GAP_LEADING = -0.005;
const GAP_TRAILING = -0.005;
const GAP_INNER = -0.01;
const CONSECUTIVE = 1.0;
const AFTER_SLASH = 0.9;
const WORD_START = 0.8;
const CAPITAL = 0.7;
const AFTER_DOT = 0.6;

/** How well a query matches a label, and which of the label's characters it matched. */
export interface Match {
  /** Higher is better; comparable only between matches of the same query. */
  score: number;
  /** The indices of the matched characters in the label, ascending, for highlighting. */
  positions: number[];
}

/** What a match at `text[j]` is worth for where it stands. */
function bonuses(text: string): number[] {
  const out: number[] = [];
  let previous = "/";
  for (const char of text) {
    const lower = char.toLowerCase();
    const isUpper = lower !== char;
    const isLetterOrDigit = /[\p{L}\p{N}]/u.test(char);
    let bonus = 0;
    if (isLetterOrDigit) {
      if (previous === "/") bonus = AFTER_SLASH;
      else if (previous === "-" || previous === "_" || previous === " " || previous === ":")
        bonus = WORD_START;
      else if (previous === ".") bonus = AFTER_DOT;
      else if (isUpper && /\p{Ll}/u.test(previous)) bonus = CAPITAL;
      else if (/["“([]/.test(previous)) bonus = WORD_START;
    }
    out.push(bonus);
    previous = char;
  }
  return out;
}

/**
 * Matches `query` against `label`, ignoring case; null when the query's characters do not all
 * appear in order. An empty (or blank) query matches everything with score 0.
 */
export function match(query: string, label: string): Match | null {
  const q = Array.from(query.trim().toLowerCase()).slice(0, MAX_QUERY);
  const original = Array.from(label).slice(0, MAX_TEXT);
  const t = original.map((c) => c.toLowerCase());
  const n = q.length;
  const m = t.length;
  if (n === 0) return { score: 0, positions: [] };
  if (n > m) return null;
  // Most labels do not match at all: find that out before building the tables.
  for (let i = 0, j = 0; i < n; j++) {
    if (j === m) return null;
    if (t[j] === q[i]) i++;
  }
  const bonus = bonuses(original.join(""));
  // D[i][j]: the best score with q[i] matched at t[j]; M[i][j]: the best with q[0..=i] matched
  // somewhere in t[0..=j].
  const D: Float64Array[] = [];
  const M: Float64Array[] = [];
  for (let i = 0; i < n; i++) {
    const d = new Float64Array(m);
    const best = new Float64Array(m);
    const gap = i === n - 1 ? GAP_TRAILING : GAP_INNER;
    let previous = -Infinity;
    for (let j = 0; j < m; j++) {
      if (q[i] === t[j]) {
        let score = -Infinity;
        if (i === 0) score = j * GAP_LEADING + bonus[j]!;
        else if (j > 0)
          score = Math.max(M[i - 1]![j - 1]! + bonus[j]!, D[i - 1]![j - 1]! + CONSECUTIVE);
        d[j] = score;
        previous = Math.max(score, previous + gap);
      } else {
        d[j] = -Infinity;
        previous = previous + gap;
      }
      best[j] = previous;
    }
    D.push(d);
    M.push(best);
  }
  // Walk back through the tables for the characters the best score matched.
  const positions = new Array<number>(n);
  let required = false;
  for (let i = n - 1, j = m - 1; i >= 0; i--) {
    for (; j >= 0; j--) {
      const here = D[i]![j]!;
      if (here !== -Infinity && (required || here === M[i]![j]!)) {
        required = i > 0 && j > 0 && M[i]![j]! === D[i - 1]![j - 1]! + CONSECUTIVE;
        positions[i] = j;
        j--;
        break;
      }
    }
  }
  // A label that is the query exactly beats every other.
  const score = n === m ? Infinity : M[n - 1]![m - 1]!;
  return { score, positions };
}

/** An item that matched, with how. */
export interface Ranked<T> {
  item: T;
  match: Match;
}

/**
 * The items whose label matches `query`, best first; items that score the same keep their
 * order, so an empty query lists them as given.
 */
export function rank<T>(
  query: string,
  items: readonly T[],
  labelOf: (item: T) => string,
): Ranked<T>[] {
  const found: (Ranked<T> & { order: number })[] = [];
  items.forEach((item, order) => {
    const m = match(query, labelOf(item));
    if (m !== null) found.push({ item, match: m, order });
  });
  found.sort((a, b) => b.match.score - a.match.score || a.order - b.order);
  return found.map(({ item, match: m }) => ({ item, match: m }));
}
