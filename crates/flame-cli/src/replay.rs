//! `flame replay`: the comparison as a table.

use std::fmt::Write as _;
use std::path::Path;

use flame_api::{ApiError, ImportFormat, Replay};

/// Runs the replay of `path` and prints it.
pub fn run(
    path: &Path,
    format: Option<ImportFormat>,
    session: Option<&str>,
    calls: bool,
    json: bool,
) -> Result<(), ApiError> {
    let replay = flame_api::replay_file(path, format, session)?;
    if json {
        let text = serde_json::to_string_pretty(&replay)
            .map_err(|e| ApiError::internal("write JSON", e))?;
        crate::terminal::print_line(&text)
    } else {
        crate::terminal::print_line(&crate::terminal::escape_controls(&table(&replay, calls)))
    }
}

fn table(r: &Replay, calls: bool) -> String {
    let mut out = String::new();
    let share = |flame: u64, linear: u64| {
        if linear == 0 {
            "-".to_owned()
        } else {
            format!("{:.0}%", flame as f64 * 100.0 / linear as f64)
        }
    };
    if calls {
        let _ = writeln!(
            out,
            "{:>5}  {:<44} {:>10} {:>10} {:>6} {:>8}",
            "call", "frame", "linear", "flame", "share", "recalled"
        );
        for (i, c) in r.per_call.iter().enumerate() {
            let title: String = c.frame_title.chars().take(44).collect();
            let recalled = if c.returning_paths == 0 {
                String::new()
            } else {
                format!("{}/{}", c.recalled_paths, c.returning_paths)
            };
            let _ = writeln!(
                out,
                "{:>5}  {:<44} {:>10} {:>10} {:>6} {:>8}",
                i + 1,
                title,
                c.linear_tokens,
                c.flame_tokens,
                share(c.flame_tokens, c.linear_tokens),
                recalled
            );
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{:<28} {:>12} {:>12} {:>6}", "", "linear", "flame", "share");
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12} {:>6}",
        format!("total over {} calls", r.calls),
        r.linear_tokens,
        r.flame_tokens,
        share(r.flame_tokens, r.linear_tokens)
    );
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12} {:>6}",
        "peak call",
        r.peak_linear,
        r.peak_flame,
        share(r.peak_flame, r.peak_linear)
    );
    let mean = |t: u64| t.checked_div(r.calls).unwrap_or(0);
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12}",
        "mean call",
        mean(r.linear_tokens),
        mean(r.flame_tokens)
    );
    let percentiles: Vec<String> =
        r.ratio_percentiles.iter().map(|(p, v)| format!("p{p} {:.0}%", v * 100.0)).collect();
    let _ = writeln!(out, "flame/linear per call: {}", percentiles.join(", "));
    let _ = writeln!(
        out,
        "first-touch recall: {} ({} of {} files a frame touched first, after another frame had, named in its context)",
        r.first_touch_recall.map_or_else(|| "-".to_owned(), |v| format!("{:.0}%", v * 100.0)),
        r.recalled_paths,
        r.returning_paths
    );
    let _ = writeln!(
        out,
        "subagents: {} tokens of transcript, {} tokens of results handed back",
        r.subagent_transcript_tokens, r.subagent_result_tokens
    );
    if r.recorded_growth > 0 {
        let _ = writeln!(
            out,
            "token estimate: Flame counts {} tokens where the recorded input grew by {} between calls ({:.1}%)",
            r.counted_growth,
            r.recorded_growth,
            r.counted_growth as f64 * 100.0 / r.recorded_growth as f64
        );
    }
    let _ = write!(
        out,
        "compaction calls left out: {} ({} linear tokens)\nlinear: recorded input incl. cache reads and writes; flame: assembled context + the thread's fixed overhead (system prompt and tools, estimated from its first call)",
        r.compaction_calls, r.compaction_linear_tokens
    );
    out
}
