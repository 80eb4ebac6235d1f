//! The frame operations. Each public method is one `IMMEDIATE` transaction: it checks the
//! lifecycle rules of `flame_model::lifecycle` against the rows it reads, writes the change and
//! its events, and marks the touched frames' logs as pending — all or nothing. The operations
//! are split by job: whole trees (`trees`), planned frames (`planning`), the lifecycle of
//! started work (`lifecycle_ops`), messages and replies (`messages`), the file trail (`trail`), budgets (`budgets`), followed sessions (`follow`), the gateway's calls (`gateway`), checkpoints and rollbacks (`checkpoints`), reads (`reads`), and the
//! transaction with the steps every operation shares (`writer`).
//!
//! A refusal returns before anything is written. `delete_tree` is the one operation that removes
//! history: a whole tree, its messages and its events go in one transaction, leaving one
//! `tree_deleted` event naming the gone root for followers. `claim_first_start` answers, once per
//! database, whether the store is new and empty (the sample tree's cue). An open reply records the
//! process writing it (its id and start time) and when it last saved, and `open_replies` hands them
//! to the caller, which decides whose writer is gone. `pop_focused` pops a frame only while it is
//! still its tree's focus, read in the same transaction. Every pop appends the frame's changed
//! paths that its artifacts do not already name after the artifacts given, sorted, and the pop
//! event carries the merged list. `set_workspace` records a `workspace_set` event on the root
//! frame.

mod budgets;
mod checkpoints;
mod contexts;
mod follow;
mod gateway;
mod lifecycle_ops;
mod messages;
mod planning;
mod reads;
mod trail;
mod trees;
mod writer;

pub use budgets::{BudgetedSpend, SubtreeUsage};
pub use checkpoints::{CheckpointRow, LaterChange, MAX_CHECKPOINT_PATHS, NewCheckpoint};
pub use contexts::{SavedContext, VersionedContext};
pub use flame_model::RollbackRecord;
pub use follow::{
    FollowCursor, FollowFrameChange, FollowMessage, FollowNewFrame, FollowStored, FollowUpdate,
    FollowedFrame, FollowedSession,
};
pub use gateway::{GATEWAY_SOURCE, GatewayCall, Rewrite};
pub use lifecycle_ops::Pop;
pub use messages::{MAX_MESSAGE_BYTES, OpenReply, ReplyOwner, fit_reply, truncation_note};
pub use planning::PlanItem;
pub use trail::{MAX_TRAIL_PATH_BYTES, MAX_TRAIL_PATHS, StoredToolResult};
pub use trees::{DeletedTree, TreeSummary};
pub use writer::Change;
