// How messages look: person and assistant as bubbles of escaped Markdown, notes muted, tool
// calls and tool results as compact cards (a workspace tool's result as its `ToolCard`), and the
// reply still streaming in. A call's card names what it is about (its path or command), and a
// result that does not name its tool (an imported transcript's) is named by its call. Everything
// a message holds is untrusted and goes through `Markdown` or into text nodes.

import type { Message_Serialize as Message, ToolCall, Value } from "../bindings";
import { Markdown } from "./markdown";
import { ToolCard } from "./tool-card";
import type { Streaming, StreamingTool } from "./use-conversation";

/** The first line of a text, cut to `max` characters, for a card's one-line summary. */
export function firstLine(text: string, max = 100): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Which arguments say what a call is about, in the order they are looked for. */
const SUBJECT_KEYS = [/path/i, /command/i, /pattern/i, /query/i, /url/i, /title/i];

/**
 * What a call is about, for its card's one line: the first argument, by `SUBJECT_KEYS`, that
 * is a non-empty text (a path, a command, a pattern…), cut to its first line; `null` when none is.
 */
export function callSubject(args: Value): string | null {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return null;
  const entries = Object.entries(args);
  for (const key of SUBJECT_KEYS) {
    for (const [name, value] of entries) {
      if (key.test(name) && typeof value === "string" && value.trim() !== "") {
        return firstLine(value.trim(), 80);
      }
    }
  }
  return null;
}

/** The tool each call id names, over `messages`: how a result that does not name its tool is named. */
export function callNames(messages: readonly Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const call of message.tool_calls ?? []) names.set(call.id, call.name);
  }
  return names;
}

export function ToolCallCard({
  call,
  result,
}: {
  call: ToolCall;
  result?: StreamingTool["result"];
}) {
  if (result?.detail) {
    return (
      <ToolCard
        name={call.name}
        content={result.content}
        detail={result.detail}
        isError={result.isError}
      />
    );
  }
  const subject = callSubject(call.arguments);
  return (
    <details
      class={`tool-card tool-call${result?.isError === true ? " tool-error" : ""}`}
      data-testid="tool-call"
      data-tool={call.name}
    >
      <summary>
        <span class="tool-icon" aria-hidden="true">
          ⚙
        </span>{" "}
        <strong>{call.name}</strong>
        {subject !== null && <span class="tool-subject"> {subject}</span>}
        {result !== undefined && <span class="muted"> — {firstLine(result.content)}</span>}
      </summary>
      {call.arguments !== null && <pre>{JSON.stringify(call.arguments, null, 2)}</pre>}
      {result !== undefined && <pre>{result.content}</pre>}
    </details>
  );
}

/**
 * One stored message. `callName` is the tool of the call a result answers, found among the
 * messages shown, for a result that does not name it.
 */
export function MessageView({
  message,
  callName,
}: {
  message: Message;
  callName?: string | undefined;
}) {
  if (message.role === "tool") {
    const name = message.tool_result?.name ?? callName ?? "tool";
    const isError = message.tool_result?.is_error === true;
    const detail = message.tool_result?.detail;
    if (detail) {
      return (
        <div
          class="tool-message"
          data-testid="message"
          data-role="tool"
          data-message-id={message.id}
        >
          <ToolCard name={name} content={message.content} detail={detail} isError={isError} />
        </div>
      );
    }
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
  const calls = message.role === "assistant" ? (message.tool_calls ?? []) : [];
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
          call={{ arguments: null, id: tool.id, name: tool.name }}
          result={tool.result}
        />
      ))}
    </article>
  );
}
