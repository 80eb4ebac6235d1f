//! The items context mode changed at a session's last call, as written (`context.rs`), kept for
//! its next call.

use std::collections::HashMap;
use std::sync::Arc;

/// The items a session's last call changed, as written, by a hash of everything their rewrite
/// read (`context::Edit::key`); `None` for an item left out. Only the last call's are kept, so
/// what it holds is bounded by one request.
#[derive(Debug, Default)]
pub(crate) struct Rewritten {
    pub items: HashMap<u64, Option<Arc<str>>>,
}
