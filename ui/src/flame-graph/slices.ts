// Long work on the main thread without freezing the window: a generator that yields between small
// steps is run in slices of a few milliseconds, and the event loop gets a turn between slices, so
// input, timers and painting go on while a large tree is laid out.

/** How long a slice runs before the event loop gets a turn, in milliseconds. */
export const SLICE_MS = 8;

/** A run of a generator in slices. */
export interface SlicedRun<T> {
  /** Settles with the generator's result; never settles once cancelled. */
  readonly done: Promise<T>;
  /** Stops the run before its next slice. */
  cancel(): void;
  /** The slices run so far: how many, the longest and all together, in milliseconds. */
  slices(): { count: number; longestMs: number; totalMs: number };
}

// One channel for every turn: a message posted to it is a task of its own, which `setTimeout`
// would delay by its minimum of 4 ms once nested.
let channel: MessageChannel | null = null;
const waiting: (() => void)[] = [];

/** Gives the event loop a turn: resolves in a task of its own. */
function nextTask(): Promise<void> {
  if (typeof MessageChannel !== "function") {
    return new Promise((resolve) => setTimeout(resolve, 0));
  }
  if (channel === null) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => waiting.shift()?.();
  }
  const port = channel.port2;
  return new Promise((resolve) => {
    waiting.push(resolve);
    port.postMessage(null);
  });
}

/**
 * Runs `steps` to its end in slices of about `sliceMs` (each slice runs whole steps, so it is
 * longer by at most one step), starting in a task of its own. `now` reads the clock.
 */
export function runInSlices<T>(
  steps: Generator<void, T, void>,
  sliceMs: number = SLICE_MS,
  now: () => number = () => performance.now(),
): SlicedRun<T> {
  let cancelled = false;
  const slices = { count: 0, longestMs: 0, totalMs: 0 };
  const ran = (start: number) => {
    const took = now() - start;
    slices.count++;
    slices.longestMs = Math.max(slices.longestMs, took);
    slices.totalMs += took;
  };
  const done = (async () => {
    for (;;) {
      await nextTask();
      if (cancelled) return new Promise<T>(() => undefined);
      const start = now();
      for (;;) {
        const step = steps.next();
        if (step.done === true) {
          ran(start);
          return step.value;
        }
        if (now() - start >= sliceMs) break;
      }
      ran(start);
    }
  })();
  return {
    done,
    cancel: () => {
      cancelled = true;
    },
    slices: () => ({ ...slices }),
  };
}
