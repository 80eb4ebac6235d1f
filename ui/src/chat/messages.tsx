// How messages look: person and assistant as bubbles of escaped Markdown, notes muted, tool
// calls and tool results as compact cards, and the reply still streaming in. Everything a
// message holds is untrusted and goes through `Markdown` or into text nodes.

import type { Message_Serialize as Message, Value } from "../bindings";
import { Markdown } from "./markdown";
import type { Streaming } from "./use-conversation";

/** A tool call as an assistant message stores it ({id, name, arguments}), read defensively. */
export interface ToolCallView {
  id: string;
  name: string;
  arguments: string;
}

function field(value: Value | undefined, key: string): Value | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value[key]
    : undefined;
}

export function toolCallsOf(message: Message): ToolCallView[] {
  const calls = message.tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.map((call) => {
    const name = field(call, "name");
    const id = field(call, "id");
    const args = field(call, "arguments");
    return {
      id: typeof id === "string" ? id : "",
      name: typeof name === "string" ? name : "(unnamed tool)",
      arguments: args === undefined ? "" : JSON.stringify(args, null, 2),
    };
  });
}

function toolResultOf(message: Message): { name: string; isError: boolean } {
  const name = field(message.tool_result ?? undefined, "name");
  const isError = field(message.tool_result ?? undefined, "is_error");
  return { name: typeof name === "string" ? name : "tool", isError: isError === true };
}

/** The first line of a text, cut to `max` characters, for a card's one-line summary. */
export function firstLine(text: string, max = 100): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function ToolCallCard({
  call,
  result,
}: {
  call: ToolCallView;
  result?: string | undefined;
}) {
  return (
    <details class="tool-card tool-call" data-testid="tool-call" data-tool={call.name}>
      <summary>
        <span class="tool-icon" aria-hidden="true">
          ⚙
        </span>{" "}
        <strong>{call.name}</strong>
        {result !== undefined && <span class="muted"> — {firstLine(result)}</span>}
      </summary>
      {call.arguments !== "" && <pre>{call.arguments}</pre>}
      {result !== undefined && <pre>{result}</pre>}
    </details>
  );
}

export function MessageView({ message }: { message: Message }) {
  if (message.role === "tool") {
    const { name, isError } = toolResultOf(message);
    return (
      <details
        class={`tool-card tool-result${isError ? " tool-error" : ""}`}
        data-testid="message"
        data-role="tool"
        data-message-id={message.id}
      >
        <summary>
          <span class="muted">{isError ? "✗" : "↳"}</span> <strong>{name}</strong>{" "}
          <span class="muted">{firstLine(message.content)}</span>
        </summary>
        <pre>{message.content}</pre>
      </details>
    );
  }
  const calls = message.role === "assistant" ? toolCallsOf(message) : [];
  return (
    <article
      class={`message message-${message.role}`}
      data-testid="message"
      data-role={message.role}
      data-message-id={message.id}
    >
      {message.role !== "note" && (
        <header class="message-meta muted">
          {message.role === "user" ? "You" : (message.model ?? "Assistant")}
          {message.interrupted && (
            <span class="interrupted" title="The reply stopped before it was complete">
              interrupted
            </span>
          )}
        </header>
      )}
      {message.content !== "" && <Markdown text={message.content} />}
      {calls.map((call) => (
        <ToolCallCard key={call.id} call={call} />
      ))}
    </article>
  );
}

/** The reply on its way: the text since the last stored message, and the tools it ran. */
export function StreamingReply({ reply }: { reply: Streaming }) {
  return (
    <article class="message message-assistant streaming" data-testid="streaming-reply">
      <header class="message-meta muted">Assistant · writing…</header>
      {reply.draft !== "" && <Markdown text={reply.draft} />}
      {reply.tools.map((tool) => (
        <ToolCallCard
          key={tool.id}
          call={{ id: tool.id, name: tool.name, arguments: "" }}
          result={tool.result}
        />
      ))}
    </article>
  );
}
