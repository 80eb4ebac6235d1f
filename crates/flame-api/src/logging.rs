//! Diagnostic logging for every front end: `tracing` events go to stderr and, when the data
//! directory can be written, to a daily-rotated file in its `diagnostics/` folder.

use std::path::Path;

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How many daily log files are kept before the oldest is removed.
const KEPT_LOG_FILES: usize = 7;

/// How many lines wait for the file writer's thread at most; past it a line is dropped rather
/// than a caller held up. The writer's queue is allocated and written whole when logging starts,
/// so tracing-appender's default of 128,000 lines kept 4 MiB resident in every process for the
/// few lines a minute Flame logs at `info`; 4,096 lines is 128 KiB.
const QUEUED_LOG_LINES: usize = 4_096;

/// Keeps the file writer flushing; drop it only when the program ends.
#[derive(Debug)]
pub struct LoggingGuard {
    _file: Option<WorkerGuard>,
    /// Why the log file could not be written, if it could not; logging then goes to stderr
    /// only. The caller decides whether that is worth saying.
    pub file_error: Option<String>,
}

/// Installs the global subscriber. `filter` is an `EnvFilter` directive such as `"info"` or
/// `"flame_store=debug"`; an invalid one falls back to `info`. `file_dir` is where the rotating
/// file goes; if it cannot be created, logging goes to stderr only and the guard says why.
pub fn init(filter: &str, file_dir: Option<&Path>) -> LoggingGuard {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);

    let appender = file_dir.map(|dir| {
        // The appender prunes old files by listing the folder, and complains on stderr when the
        // folder is not there yet, so it is created first.
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot write diagnostic logs to {}: {e}", dir.display()))?;
        RollingFileAppender::builder()
            .rotation(Rotation::DAILY)
            .filename_prefix("flame")
            .filename_suffix("log")
            .max_log_files(KEPT_LOG_FILES)
            .build(dir)
            .map_err(|e| format!("cannot write diagnostic logs to {}: {e}", dir.display()))
    });
    let (file_layer, guard, file_error) = match appender {
        Some(Ok(appender)) => {
            let (writer, guard) = NonBlockingBuilder::default()
                .buffered_lines_limit(QUEUED_LOG_LINES)
                .finish(appender);
            let layer = tracing_subscriber::fmt::layer().with_ansi(false).with_writer(writer);
            (Some(layer), Some(guard), None)
        }
        Some(Err(message)) => (None, None, Some(message)),
        None => (None, None, None),
    };

    // A second call (as in tests) keeps the first subscriber.
    let _ = tracing_subscriber::registry().with(filter).with(stderr).with(file_layer).try_init();
    LoggingGuard { _file: guard, file_error }
}
