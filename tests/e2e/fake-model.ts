// A scripted model for end-to-end tests: a small server on 127.0.0.1 that speaks the OpenAI Chat
// Completions streaming format (what Flame's OpenAI-compatible provider reads), answering each
// request with the next scripted reply, one chunk at a time. Tests point Flame's settings at it
// through XDG_CONFIG_HOME, so nothing leaves the machine.

import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";

/** One scripted answer: text pieces, then optionally one tool call. */
export interface ScriptedReply {
  pieces: string[];
  tool?: { name: string; arguments: Record<string, unknown> };
  /** Milliseconds between chunks; slow replies let a test watch (or stop) the stream. */
  interval?: number;
  /** The usage the reply reports last, as OpenAI does (cached: read from its prompt cache). */
  usage?: { prompt: number; cached: number; completion: number };
}

/** What the model received, per request. */
export interface Received {
  /** The model the request named. */
  model: string;
  /** The system prompt: Flame's preamble, the same for every frame of a tree. */
  system: string;
  /** The first message after the system prompt: the frame's opening, its `<stack-context>`. */
  opening: string;
  last: string;
  /** Every message's text, in order, the system prompt included. */
  all: string[];
}

function chunk(delta: Record<string, unknown>, finish: string | null): string {
  const body = {
    id: "chatcmpl-e2e",
    object: "chat.completion.chunk",
    created: 0,
    model: "gpt-4o",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function chunks(reply: ScriptedReply): string[] {
  const out = [chunk({ role: "assistant", content: "" }, null)];
  out.push(...reply.pieces.map((p) => chunk({ content: p }, null)));
  if (reply.tool !== undefined) {
    const args = JSON.stringify(reply.tool.arguments);
    const half = Math.floor(args.length / 2);
    const call = (fn: Record<string, string>, first: boolean) =>
      chunk(
        {
          tool_calls: [
            first
              ? { index: 0, id: `call_${reply.tool?.name}`, type: "function", function: fn }
              : { index: 0, function: fn },
          ],
        },
        null,
      );
    out.push(call({ name: reply.tool.name, arguments: args.slice(0, half) }, true));
    out.push(call({ arguments: args.slice(half) }, false));
  }
  out.push(chunk({}, reply.tool === undefined ? "stop" : "tool_calls"));
  if (reply.usage !== undefined) {
    const { prompt, cached, completion } = reply.usage;
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: completion,
      prompt_tokens_details: { cached_tokens: cached },
    };
    out.push(`data: ${JSON.stringify({ id: "chatcmpl-e2e", choices: [], usage })}\n\n`);
  }
  out.push("data: [DONE]\n\n");
  return out;
}

function text(message: { content: unknown } | undefined): string {
  return typeof message?.content === "string"
    ? message.content
    : JSON.stringify(message?.content ?? "");
}

export class FakeModel {
  readonly received: Received[] = [];
  private readonly script: ScriptedReply[] = [];
  private server: Server | null = null;
  private port = 0;

  /** `fallback` answers every request the script has no reply left for. */
  constructor(private readonly fallback: ScriptedReply) {}

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      // The window asks the provider for its list of models (GET /v1/models); this model serves
      // chat completions only, and says so, leaving the script to the chat.
      if (request.method === "GET") {
        response.writeHead(404, { "content-type": "application/json" });
        response.end('{"error":{"message":"the fake model lists no models"}}');
        return;
      }
      let body = "";
      request.on("data", (part: Buffer) => (body += part.toString()));
      request.on("end", () => {
        const parsed = JSON.parse(body) as {
          model: string;
          messages: { role: string; content: unknown }[];
        };
        const conversation = parsed.messages.filter((m) => m.role !== "system");
        this.received.push({
          model: parsed.model,
          system: text(parsed.messages.find((m) => m.role === "system")),
          opening: text(conversation[0]),
          last: text(parsed.messages[parsed.messages.length - 1]),
          all: parsed.messages.map(text),
        });
        const reply = this.script.shift() ?? this.fallback;
        response.writeHead(200, { "content-type": "text/event-stream" });
        const pending = chunks(reply);
        const timer = setInterval(() => {
          const piece = pending.shift();
          if (piece === undefined) {
            clearInterval(timer);
            response.end();
          } else {
            response.write(piece);
          }
        }, reply.interval ?? 250);
        // A client that stops reading (Stop in the window) ends the stream here too.
        response.on("close", () => clearInterval(timer));
      });
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    this.port = typeof address === "object" && address !== null ? address.port : 0;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** The OpenAI-compatible base URL this server answers on. */
  baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Forgets replies a previous test queued but did not use. */
  reset(): void {
    this.script.length = 0;
  }

  /** Queues replies for the next requests, in order. */
  answer(...replies: ScriptedReply[]): void {
    this.script.push(...replies);
  }

  /**
   * Writes Flame's model settings into `scratch/config` (pointing at this server, with `models`
   * listed besides the default, and any `more` settings) and returns the environment that makes
   * the app read them.
   */
  async settingsEnv(
    scratch: string,
    models: object[] = [],
    more: Record<string, unknown> = {},
  ): Promise<Record<string, string>> {
    const config = join(scratch, "config");
    await mkdir(join(config, "flame"), { recursive: true });
    const settings = {
      default_model: "gpt-4o",
      openai: { base_url: `http://127.0.0.1:${this.port}/v1`, api_key: "sk-e2e-not-a-real-key" },
      models,
      ...more,
    };
    await writeFile(join(config, "flame/settings.json"), JSON.stringify(settings));
    return { XDG_CONFIG_HOME: config, OPENAI_API_KEY: "" };
  }
}
