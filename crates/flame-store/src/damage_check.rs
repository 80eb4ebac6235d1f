//! SQLite's quick check of a database file, run beside a connection's first reads.
//!
//! The quick check reads every page of the file (and, since SQLite 3.44, checks every full-text
//! index against its rows): 2.3 s for the 100k-frame benchmark store, most of it the search
//! index's. A window opening on that store paid it before its first read, three times what the
//! rest of the opening cost. What the check guards is the file: nothing may be written to a
//! damaged database. Reads may come first. So a connection opened with
//! [`crate::Store::open_checking_aside`] reads at once, and the check runs on a connection of its
//! own when the caller runs it ([`DamageCheck::run`], on a thread of its choosing, when the
//! machine is otherwise idle) or before the first commit, whichever comes first. Every commit
//! waits for it: a commit hook holds each transaction until the check has passed, and rolls it
//! back if the check found the file damaged, so not one page is written to it. `Store::write`,
//! the first start's claim and the search index's catch-up also wait before they begin, outside
//! SQLite's write lock, so that an operation refused for a damaged file says so plainly
//! (`StoreError::Unusable`) rather than as a failed commit.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use rusqlite::{Connection, OpenFlags};

use crate::{BUSY_TIMEOUT, OpenError, classify, quick_check};

/// The quick check of one database file: to run once, and waited for by every commit of the
/// connections that share it.
#[derive(Debug, Clone)]
pub struct DamageCheck(Arc<Check>);

#[derive(Debug)]
struct Check {
    path: PathBuf,
    state: Mutex<State>,
    ran: Condvar,
}

#[derive(Debug, Clone)]
enum State {
    NotRun,
    Running,
    Ran(Result<(), Arc<OpenError>>),
}

impl DamageCheck {
    /// A check still to run on the file at `path`.
    pub(crate) fn pending(path: &Path) -> DamageCheck {
        DamageCheck(Arc::new(Check {
            path: path.to_path_buf(),
            state: Mutex::new(State::NotRun),
            ran: Condvar::new(),
        }))
    }

    /// A check already made, which found the file at `path` whole.
    pub(crate) fn passed(path: &Path) -> DamageCheck {
        let check = DamageCheck::pending(path);
        check.record(Ok(()));
        check
    }

    /// Runs the check, unless it has run or is running (then waits for it): on a connection of
    /// its own, with SQLite's default page cache, closed when it ends, so that reading every page
    /// leaves nothing resident. Returns what it found.
    pub fn run(&self) -> Result<(), Arc<OpenError>> {
        {
            let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
            match &*state {
                State::NotRun => *state = State::Running,
                State::Running => {
                    drop(state);
                    return self.wait();
                }
                State::Ran(found) => return found.clone(),
            }
        }
        let path = &self.0.path;
        let found = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .and_then(|conn| conn.busy_timeout(BUSY_TIMEOUT).map(|()| conn))
        .map_err(|source| classify(path, source))
        .and_then(|conn| quick_check(&conn, path))
        .map_err(Arc::new);
        self.record(found.clone());
        found
    }

    /// What the check found, running it first when no one has (a write does not wait for a
    /// check no one runs), or waiting while another thread runs it.
    pub fn wait(&self) -> Result<(), Arc<OpenError>> {
        let state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(*state, State::NotRun) {
            drop(state);
            return self.run();
        }
        let state = self
            .0
            .ran
            .wait_while(state, |state| matches!(state, State::Running))
            .unwrap_or_else(PoisonError::into_inner);
        match &*state {
            State::Ran(found) => found.clone(),
            State::NotRun | State::Running => unreachable!("waited until it ran"),
        }
    }

    /// What the check found, once it has run.
    pub fn outcome(&self) -> Option<Result<(), Arc<OpenError>>> {
        match &*self.0.state.lock().unwrap_or_else(PoisonError::into_inner) {
            State::Ran(found) => Some(found.clone()),
            State::NotRun | State::Running => None,
        }
    }

    fn record(&self, found: Result<(), Arc<OpenError>>) {
        *self.0.state.lock().unwrap_or_else(PoisonError::into_inner) = State::Ran(found);
        self.0.ran.notify_all();
    }

    /// Makes every commit on `conn` wait for the check, and roll back when it found damage.
    pub(crate) fn guard(&self, conn: &mut Connection) -> rusqlite::Result<()> {
        let check = self.clone();
        // `true` turns the commit into a rollback.
        conn.commit_hook(Some(move || check.wait().is_err()))
    }
}
