//! Where time and new ids come from, and who writes the replies. The facade reads them through
//! [`Env`], so tests pass a fixed clock and a seeded id source and get the same data directory
//! every run.

use std::time::{SystemTime, UNIX_EPOCH};

use flame_model::{IdSource, Timestamp};
use flame_store::ReplyOwner;

use crate::process;

/// The facade's sources of time and ids, and the process it writes replies as.
pub struct Env {
    clock: Box<dyn FnMut() -> Timestamp + Send>,
    pub(crate) ids: IdSource,
    pub(crate) writer: ReplyOwner,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("ids", &self.ids)
            .field("writer", &self.writer)
            .finish_non_exhaustive()
    }
}

impl Env {
    /// The system clock, ids seeded from the operating system's randomness, and replies written
    /// as this process.
    pub fn system() -> Env {
        let seed = fastrand::u64(..);
        Env {
            clock: Box::new(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_millis() as Timestamp)
                    .unwrap_or(0)
            }),
            ids: IdSource::seeded(seed),
            writer: process::current(),
        }
    }

    /// A clock that starts at `start` and advances one millisecond each time it is read, and
    /// ids from `seed`: the same inputs give the same data, for tests. Replies are written as
    /// this process.
    pub fn fixed(start: Timestamp, seed: u64) -> Env {
        let mut now = start;
        Env {
            clock: Box::new(move || {
                now += 1;
                now
            }),
            ids: IdSource::seeded(seed),
            writer: process::current(),
        }
    }

    /// Time from `clock` and ids from `seed`: a test or a benchmark that replays recorded
    /// calls sets the time of each. Replies are written as this process.
    pub fn with_clock(clock: Box<dyn FnMut() -> Timestamp + Send>, seed: u64) -> Env {
        Env { clock, ids: IdSource::seeded(seed), writer: process::current() }
    }

    /// The same, writing replies as `writer`: a test stands for a process that has stopped by
    /// naming one that does not run.
    pub fn writing_as(self, writer: ReplyOwner) -> Env {
        Env { writer, ..self }
    }

    pub(crate) fn now(&mut self) -> Timestamp {
        (self.clock)()
    }
}
