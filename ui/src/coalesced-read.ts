import { useRef } from "preact/hooks";

/**
 * A read that events ask for again and again (a view's list, read after each change). A request
 * that comes while a read runs owes one more read after it, however many came, so the view ends
 * on the newest state without a read per event.
 */
export function useCoalescedRead(read: () => Promise<void>): () => Promise<void> {
  const state = useRef<"idle" | "running" | "owed">("idle");
  return async () => {
    if (state.current !== "idle") {
      state.current = "owed";
      return;
    }
    try {
      do {
        state.current = "running";
        await read();
      } while ((state.current as string) === "owed");
    } finally {
      state.current = "idle";
    }
  };
}
