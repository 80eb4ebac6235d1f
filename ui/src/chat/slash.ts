// The composer's slash commands: what a line starting with `/` asks for. Parsing is pure; the
// chat pane runs the result through the backend, which decides whether the operation is allowed.

/** A slash command the composer knows, with how to write it, for the completion list. */
export interface SlashCommand {
  name: string;
  usage: string;
  summary: string;
}

export const SLASH_COMMANDS: readonly SlashCommand[] = [
  { name: "push", usage: "/push TITLE :: CRITERIA", summary: "push a child frame and go into it" },
  { name: "plan", usage: "/plan TITLE :: CRITERIA", summary: "plan a child frame for later" },
  { name: "pop", usage: "/pop", summary: "pop this frame with its results" },
  {
    name: "start",
    usage: "/start [FRAME-ID]",
    summary: "start a planned frame (default: the first planned child)",
  },
  { name: "status", usage: "/status", summary: "show this frame's status and totals" },
  { name: "invalidate", usage: "/invalidate [REASON]", summary: "invalidate this frame" },
];

/** What the composer's text asks for. */
export type ComposerAction =
  | { kind: "message"; text: string }
  | { kind: "push" | "plan"; title: string; criteria: string }
  | { kind: "pop" }
  | { kind: "start"; frame: string | null }
  | { kind: "status" }
  | { kind: "invalidate"; reason: string | null }
  | { kind: "invalid"; message: string };

/**
 * Reads the composer's text. Plain text is a message; `//…` sends a message starting with `/`,
 * so a person can still write one.
 */
export function parseComposer(input: string): ComposerAction {
  const text = input.trim();
  if (!text.startsWith("/")) return { kind: "message", text };
  if (text.startsWith("//")) return { kind: "message", text: text.slice(1) };
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(text);
  const name = match?.[1] ?? "";
  const rest = (match?.[2] ?? "").trim();
  switch (name) {
    case "push":
    case "plan": {
      const split = rest.indexOf("::");
      const title = (split < 0 ? rest : rest.slice(0, split)).trim();
      const criteria = split < 0 ? "" : rest.slice(split + 2).trim();
      if (title === "" || criteria === "") {
        return { kind: "invalid", message: `Write it as /${name} TITLE :: CRITERIA.` };
      }
      return { kind: name, title, criteria };
    }
    case "pop":
    case "status":
      return rest === ""
        ? { kind: name }
        : { kind: "invalid", message: `/${name} takes nothing after it.` };
    case "start":
      return /\s/.test(rest)
        ? { kind: "invalid", message: "Write it as /start or /start FRAME-ID." }
        : { kind: "start", frame: rest === "" ? null : rest };
    case "invalidate":
      return { kind: "invalidate", reason: rest === "" ? null : rest };
    default:
      return {
        kind: "invalid",
        message: `There is no /${name}. Known: ${SLASH_COMMANDS.map((c) => `/${c.name}`).join(", ")}; start with // to send a message beginning with /.`,
      };
  }
}

/** The commands to offer while the person is still typing a command's name. */
export function completions(input: string): SlashCommand[] {
  const match = /^\/(\w*)$/.exec(input);
  if (match === null) return [];
  const typed = match[1] ?? "";
  return SLASH_COMMANDS.filter((c) => c.name.startsWith(typed));
}
