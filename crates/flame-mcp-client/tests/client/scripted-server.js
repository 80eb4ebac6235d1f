// A scripted MCP server over stdio for Flame's tests, with no dependencies: one JSON-RPC message a
// line. `node scripted-server.js MODE` behaves as MODE says:
//
//   well       answers as the protocol says; its tools are `echo`, `slow` (never answers),
//              `fail` (a tool error) and `odd`, whose schema llama.cpp's server would refuse
//   changing   like `well`, but each listing of its tools names a new tool (`tool_1`, `tool_2`…)
//   exit       writes why to its standard error and exits with code 3 before answering
//   silent     reads everything and never answers
//   noisy      answers every request with a line that is not JSON
//   flood      writes text that is not JSON without end
//   malformed  starts and lists as `well`, then answers a call with JSON that is not JSON-RPC
//   huge       starts and lists as `well`, then answers a call with a 50 MB result
//   endless    lists its tools in pages without end, each naming a next one
//
// With FLAME_TEST_PIDS set, it starts a child process of its own (which it never stops) and
// writes both process ids to that file, so a test can check that stopping the server ends both.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import process from "node:process";
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "well";
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const result = (id, value) => send({ jsonrpc: "2.0", id, result: value });

if (process.env.FLAME_TEST_PIDS) {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000000)"], {
    stdio: "ignore",
  });
  writeFileSync(process.env.FLAME_TEST_PIDS, `${process.pid} ${child.pid}\n`);
}

if (mode === "exit") {
  process.stderr.write("fatal: the database /nowhere/db.sqlite cannot be opened\n");
  process.exit(3);
}
if (mode === "flood") {
  const junk = "this is not JSON-RPC ".repeat(1000) + "\n";
  const more = () => {
    while (process.stdout.write(junk));
    process.stdout.once("drain", more);
  };
  more();
}

let listings = 0;
const tools = () => {
  const list = [
    {
      name: "echo",
      description: "Says the message back.",
      inputSchema: {
        type: "object",
        properties: { message: { type: "string" } },
        required: ["message"],
      },
    },
    { name: "slow", description: "Never answers.", inputSchema: { type: "object" } },
    { name: "fail", description: "Always fails.", inputSchema: { type: "object" } },
    {
      name: "odd",
      description: "A schema llama.cpp's server refuses as it is.",
      inputSchema: {
        type: "object",
        properties: {
          anything: true,
          list: { type: "array", items: true },
          link: { $ref: "#/$defs/missing" },
          kind: { type: "widget" },
          code: { type: "string", minLength: 100000 },
        },
      },
    },
  ];
  if (mode === "changing") {
    listings += 1;
    list.push({ name: `tool_${listings}`, inputSchema: { type: "object" } });
  }
  return list;
};

createInterface({ input: process.stdin }).on("line", (line) => {
  if (mode === "silent" || mode === "flood" || line.trim() === "") return;
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  if (mode === "noisy") {
    process.stdout.write("Server starting... please wait\n");
    return;
  }
  switch (message.method) {
    case "initialize":
      return result(message.id, {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: { listChanged: mode === "changing" } },
        serverInfo: { name: `scripted-${mode}`, version: "1.0.0" },
      });
    case "ping":
      return result(message.id, {});
    case "tools/list":
      if (mode === "endless") {
        const page = Number(message.params?.cursor ?? 0);
        const tool = { name: `page_${page}`, inputSchema: { type: "object" } };
        return result(message.id, { tools: [tool], nextCursor: String(page + 1) });
      }
      return result(message.id, { tools: tools() });
    case "tools/call": {
      const { name, arguments: args } = message.params;
      if (mode === "malformed") return send({ jsonrpc: "2.0", id: message.id, oops: true });
      if (mode === "huge") {
        const text = "x".repeat(50 * 1024 * 1024);
        return result(message.id, { content: [{ type: "text", text }] });
      }
      if (name === "slow") return;
      if (name === "fail") {
        return result(message.id, {
          content: [{ type: "text", text: "the tool failed on purpose" }],
          isError: true,
        });
      }
      if (name === "echo" || name === "odd" || name.startsWith("tool_")) {
        return result(message.id, {
          content: [{ type: "text", text: `${name}: ${JSON.stringify(args ?? {})}` }],
        });
      }
      return send({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32602, message: `no tool named ${name}` },
      });
    }
    default:
      return send({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32601, message: `no method ${message.method}` },
      });
  }
});
