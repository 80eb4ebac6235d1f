import { describe, expect, it } from "vitest";

import { runInSlices } from "./slices";

/** A generator of `steps` steps that advances a fake clock by `stepMs` each, logging its steps. */
function work(steps: number, stepMs: number, clock: { now: number }, log: string[]) {
  return (function* () {
    for (let k = 0; k < steps; k++) {
      clock.now += stepMs;
      log.push(`step ${k}`);
      yield;
    }
    return "result";
  })();
}

describe("runInSlices", () => {
  it("runs the steps to the end and settles with the result", async () => {
    const clock = { now: 0 };
    const log: string[] = [];
    const run = runInSlices(work(10, 1, clock, log), 4, () => clock.now);
    await expect(run.done).resolves.toBe("result");
    expect(log).toHaveLength(10);
  });

  it("gives the event loop a turn between slices of about the time asked", async () => {
    const clock = { now: 0 };
    const log: string[] = [];
    const first = runInSlices(work(10, 1, clock, log), 3, () => clock.now);
    // Another run's slices are tasks too: they take their turns between the first run's.
    const other: string[] = [];
    const second = runInSlices(work(4, 1, clock, other), 3, () => clock.now);
    const order: string[] = [];
    void first.done.then(() => order.push("first"));
    void second.done.then(() => order.push("second"));
    await Promise.all([first.done, second.done]);
    expect(order).toEqual(["second", "first"]);
    // Three steps of 1 ms make a slice of 3 ms; the tenth step finishes a fourth, shorter one.
    expect(first.slices()).toEqual({ count: 4, longestMs: 3, totalMs: 10 });
  });

  it("runs nothing more once cancelled, and never settles", async () => {
    const clock = { now: 0 };
    const log: string[] = [];
    const run = runInSlices(work(10, 1, clock, log), 2, () => clock.now);
    run.cancel();
    let settled = false;
    void run.done.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual([]);
    expect(settled).toBe(false);
  });
});
