// How each frame status looks and reads, in one place: the graph paints with these colours, and
// the legend, the tree mirror, the tooltip and the chat pane name statuses with these labels.

import type { Status } from "./bindings";

/** Fill, outline and label colours of each status; the legend shows the same. */
export const STATUS_STYLE: Record<Status, { fill: string; text: string; label: string }> = {
  in_progress: { fill: "#ec7a2c", text: "#1b1822", label: "in progress" },
  completed: { fill: "#4f9d69", text: "#10190f", label: "completed" },
  failed: { fill: "#d9534f", text: "#1b1010", label: "failed" },
  blocked: { fill: "#d4a72c", text: "#1d1708", label: "blocked" },
  planned: { fill: "#8c7fd6", text: "#e7e4ee", label: "planned" },
  invalidated: { fill: "#4a4655", text: "#b4aec0", label: "invalidated" },
};
