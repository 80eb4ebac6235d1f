//! The frame operations. Each public method is one `IMMEDIATE` transaction: it checks the
//! lifecycle rules of `flame_model::lifecycle` against the rows it reads, writes the change and
//! its events, and marks the touched frames' logs as pending — all or nothing. The operations
//! are split by job: whole trees (`trees`), planned frames (`planning`), the lifecycle of
//! started work (`lifecycle_ops`), messages and replies (`messages`), the file trail (`trail`), budgets (`budgets`), followed sessions (`follow`), checkpoints and rollbacks (`checkpoints`), reads (`reads`), and the
//! transaction with the steps every operation shares (`writer`).

mod budgets;
mod checkpoints;
mod contexts;
mod follow;
mod lifecycle_ops;
mod messages;
mod planning;
mod reads;
mod trail;
mod trees;
mod writer;

pub use budgets::{BudgetSnapshot, ReplyUsage, SubtreeUsage};
pub use checkpoints::{CheckpointRow, LaterChange, MAX_CHECKPOINT_PATHS, NewCheckpoint};
pub use flame_model::RollbackRecord;
pub use follow::{
    FollowCursor, FollowFrameChange, FollowMessage, FollowNewFrame, FollowStored, FollowUpdate,
    FollowedFrame, FollowedSession,
};
pub use lifecycle_ops::Pop;
pub use messages::{MAX_MESSAGE_BYTES, OpenReply, ReplyOwner, fit_reply, truncation_note};
pub use planning::PlanItem;
pub use trail::{MAX_TRAIL_PATH_BYTES, MAX_TRAIL_PATHS, StoredToolResult};
pub use trees::{DeletedTree, TreeSummary};
pub use writer::Change;
