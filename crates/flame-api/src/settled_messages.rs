//! The focus's messages as context assembly reads them, kept between assemblies.
//!
//! A chat assembles a context before every model call, each time with the focus's whole
//! conversation: hundreds of messages, their tool calls and results parsed from JSON, read again
//! though only the last few are new. A message is *settled* once its content can no longer
//! change: every message is, except a reply still open, which grows and is finished in place
//! under the same id (the rule `FrameView` follows). Ids only grow, and a settled message is only
//! ever deleted with its whole tree. So the settled messages of the frame last assembled for are
//! kept, and each assembly reads only the messages after them, in one statement that also says
//! which are open; a count of the kept ones checks that none has gone.

use std::sync::{Arc, Mutex, PoisonError};

use flame_model::{FrameId, Message, MessageId};
use flame_store::{Store, StoreError};

/// How many bytes of message text are kept at most; a frame with more is read whole each time.
const MAX_KEPT_BYTES: usize = 64 << 20;

/// Which of the messages [`SettledMessages::with`] gives are settled.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settled {
    /// How many of the first are: each of those is the message its id named in every call
    /// since the last `fresh` one, and will name in every later call until the next.
    pub count: usize,
    /// Whether the messages were read afresh (the first call, another frame, or a kept message
    /// gone), so what an id named in earlier calls no longer counts.
    pub fresh: bool,
}

/// The settled messages of the frame last assembled for.
#[derive(Debug, Default)]
pub(crate) struct SettledMessages(Mutex<Option<Kept>>);

#[derive(Debug)]
struct Kept {
    frame: FrameId,
    /// The frame's messages up to the last settled one, oldest first, none of them open;
    /// shared with the contexts that send them.
    messages: Vec<Arc<Message>>,
    bytes: usize,
}

impl SettledMessages {
    /// Runs `with` on frame `frame`'s messages, oldest first, as the store has them now (the
    /// same as `Store::messages(frame)`), and which of them are settled.
    ///
    /// `none_gone` says that no message of the frame's tree can have been deleted since the
    /// last call (no event but `message_added` was recorded in the tree since then), so the
    /// kept ones are not counted again.
    pub(crate) fn with<T>(
        &self,
        store: &Store,
        frame: &FrameId,
        none_gone: bool,
        with: impl FnOnce(&[Arc<Message>], Settled) -> T,
    ) -> Result<T, StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut current, fresh) = match kept.take() {
            Some(k) if k.frame == *frame && (none_gone || still_there(store, &k)?) => (k, false),
            _ => (Kept { frame: frame.clone(), messages: Vec::new(), bytes: 0 }, true),
        };
        let after = current.messages.last().map_or(MessageId(0), |m| m.id);
        let mut settled = current.messages.len();
        for (message, open) in store.messages_after(frame, after)? {
            // Messages after an open reply are settled too, but they are read again with it
            // until it closes, so that the kept ones are always a prefix.
            if !open && settled == current.messages.len() {
                settled += 1;
                current.bytes += weight(&message);
            }
            current.messages.push(Arc::new(message));
        }
        let result = with(&current.messages, Settled { count: settled, fresh });
        current.messages.truncate(settled);
        if current.bytes <= MAX_KEPT_BYTES {
            *kept = Some(current);
        }
        Ok(result)
    }
}

/// Whether every kept message is still stored: a settled message goes only with its tree.
fn still_there(store: &Store, kept: &Kept) -> Result<bool, StoreError> {
    let Some(last) = kept.messages.last() else { return Ok(true) };
    Ok(store.message_count_through(&kept.frame, last.id)? == kept.messages.len() as u64)
}

/// About the bytes a message holds.
fn weight(message: &Message) -> usize {
    message.content.len()
}
