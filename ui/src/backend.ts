// The slice of the generated command bindings the UI uses. Components take it as a prop, so
// tests pass a fake and the app passes the real `commands` from bindings.ts.
import type { commands } from "./bindings";

export type Backend = Pick<typeof commands, "appInfo">;
