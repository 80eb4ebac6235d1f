// A line an agent writes, in the window: the app follows a Claude Code session (followed with
// `flame follow --once` before it opens, so it is the current tree and its last segment the
// focus), and each round appends one assistant line to the session's file and times, from the
// write, until the followed frame's chat shows the line's text. The path is the app's own: the
// follower's file notification, its read and transaction, the `TreeChanged` it emits at once, and
// the window's reading of the outline and the frame. Prints the median and the slowest of 20 as
// `BENCH follow.line_in_window_* ms` (the goal is under 1 s). Run by `make bench`.

import { execFileSync } from "node:child_process";
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

import { describe, it } from "vitest";

import { withApp } from "../e2e/harness";

const ROUNDS = 20;

function line(kind: "user" | "assistant", n: number, text: string): string {
  const timestamp = `2026-11-26T11:${String(Math.floor(n / 60)).padStart(2, "0")}:${String(n % 60).padStart(2, "0")}.000Z`;
  const message =
    kind === "user"
      ? { role: "user", content: text }
      : {
          id: `bench-${n}`,
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [{ type: "text", text }],
          usage: { input_tokens: 3, cache_read_input_tokens: 2000, output_tokens: 20 },
        };
  return `${JSON.stringify({ type: kind, sessionId: "bench", cwd: "/work/bench", timestamp, message })}\n`;
}

describe("following in the window", () => {
  it("shows a line the agent writes", async () => {
    let file = "";
    await withApp(
      "follow bench",
      async (app) => {
        await app.find("[data-testid=chat-pane] [data-message-id]");
        const times: number[] = [];
        for (let n = 0; n < ROUNDS; n++) {
          const text = `bench line ${n} ${Date.now()}`;
          const written = performance.now();
          await appendFile(file, line("assistant", 10 + n, text));
          await app.driver.wait(
            async () =>
              app.driver.executeScript<boolean>(
                "return document.querySelector('[data-testid=chat-pane]').textContent.includes(arguments[0])",
                text,
              ),
            10_000,
            `line ${n} in the chat`,
          );
          times.push(performance.now() - written);
          await new Promise((r) => setTimeout(r, 200));
        }
        times.sort((a, b) => a - b);
        const median = times[Math.floor(times.length / 2)] ?? 0;
        const slowest = times[times.length - 1] ?? 0;
        process.stdout.write(`BENCH follow.line_in_window_median ${median.toFixed(0)} ms\n`);
        process.stdout.write(`BENCH follow.line_in_window_max ${slowest.toFixed(0)} ms\n`);
      },
      {
        prepareHome: async (scratch) => {
          const project = join(scratch, "claude/projects/-work-bench");
          await mkdir(project, { recursive: true });
          file = join(project, "bench.jsonl");
          await writeFile(
            file,
            line("user", 0, "Benchmark the following") + line("assistant", 1, "Ready"),
          );
          const home = join(scratch, "home");
          execFileSync(
            process.env["FLAME_CLI"] ?? "flame",
            ["--home", home, "follow", "--once", file],
            {
              stdio: "ignore",
            },
          );
          return home;
        },
        env: (scratch) =>
          Promise.resolve({
            CLAUDE_CONFIG_DIR: join(scratch, "claude"),
            CODEX_HOME: join(scratch, "codex"),
            XDG_DATA_HOME: join(scratch, "xdg-data"),
          }),
      },
    );
  });
});
