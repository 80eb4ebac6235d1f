//! The sample tree a new data directory starts with: the example of Flame's specification ("Build
//! the application"), with short conversations, so a first-time user has something to explore
//! before creating their own tree. It is a Flame export (`sample_tree.json`) stored the way an
//! import is, its times moved so that its last message is now.

use flame_import::flame_json::{self, Export};
use flame_model::{Actor, Tree};

use crate::{ApiError, Flame};

/// The sample, in Flame's export schema, each message with its tokens in the live encoding
/// (a test recounts them). They are stored as they are rather than counted at the first start:
/// counting would build the encoding's tables, a few MiB the window then holds for as long as it
/// runs, on a start that otherwise never counts (issue 39, `app.idle_rss`).
const SAMPLE: &str = include_str!("sample_tree.json");

impl Flame {
    /// Makes the sample tree, current, if this is the data directory's first start (no tree
    /// yet, and never asked before); returns it, or `None` when it was not made. Asked once per
    /// data directory, so a deleted sample does not come back.
    pub fn offer_sample_tree(&self, actor: Actor) -> Result<Option<Tree>, ApiError> {
        if !self.store().claim_first_start()? {
            return Ok(None);
        }
        let mut export: Export = serde_json::from_str(SAMPLE)
            .map_err(|e| ApiError::internal("read the sample tree", e))?;
        let now = self.env().now();
        shift_times(&mut export, now);
        let draft = flame_json::to_draft(&export)
            .map_err(|e| ApiError::internal("read the sample tree", e))?;
        self.store_draft(actor, &draft).map(Some)
    }
}

/// Moves every time in `export` by the same amount, so that the latest one is `now`.
fn shift_times(export: &mut Export, now: i64) {
    let latest = export
        .frames
        .iter()
        .flat_map(|f| {
            [Some(f.created_at), f.started_at, f.ended_at]
                .into_iter()
                .flatten()
                .chain(f.messages.iter().map(|m| m.created_at))
        })
        .max()
        .unwrap_or(0);
    let by = now - latest;
    export.tree.created_at += by;
    for frame in &mut export.frames {
        frame.created_at += by;
        for time in [&mut frame.started_at, &mut frame.ended_at].into_iter().flatten() {
            *time += by;
        }
        for message in &mut frame.messages {
            message.created_at += by;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_is_a_valid_export_of_the_spec_tree() {
        let export: Export = serde_json::from_str(SAMPLE).unwrap();
        let draft = flame_json::to_draft(&export).unwrap();
        let titles: Vec<&str> = draft.frames.iter().map(|f| f.title.as_str()).collect();
        for title in [
            "Build the application",
            "User Authentication",
            "API Routes",
            "CRUD Endpoints",
            "Pagination",
        ] {
            assert!(titles.contains(&title), "{title} is in the sample");
        }
        let tree = draft.materialise(&mut flame_model::IdSource::seeded(1)).unwrap();
        assert_eq!(tree.frames.len(), export.frames.len());
    }

    #[test]
    fn the_samples_token_counts_are_its_messages_counts() {
        let export: Export = serde_json::from_str(SAMPLE).unwrap();
        let draft = flame_json::to_draft(&export).unwrap();
        let stored: Vec<u64> = draft.messages.iter().map(|m| m.tokens).collect();
        let counted: Vec<u64> =
            draft.messages.iter().map(|m| crate::frames::count_message(&m.message)).collect();
        assert_eq!(stored, counted, "sample_tree.json's message tokens, in its order");
    }

    #[test]
    fn times_move_so_the_latest_is_now() {
        let mut export: Export = serde_json::from_str(SAMPLE).unwrap();
        let earliest_before = export.tree.created_at;
        shift_times(&mut export, 10_000_000);
        let latest =
            export.frames.iter().flat_map(|f| f.messages.iter().map(|m| m.created_at)).max();
        assert_eq!(latest, Some(10_000_000));
        assert!(export.tree.created_at > earliest_before);
        assert!(export.frames.iter().all(|f| f.created_at <= 10_000_000));
    }
}
