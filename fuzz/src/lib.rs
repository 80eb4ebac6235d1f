//! What the fuzz targets share: a scratch file for the importers, which read files rather than
//! bytes, and the checks every draft an importer returns must pass.

use std::path::PathBuf;
use std::sync::OnceLock;

use flame_import::Draft;
use flame_model::IdSource;

/// A file named `name` in a folder of this process's own under the system's temporary folder,
/// overwritten with `bytes`. libFuzzer runs one input at a time, so one file per target is
/// enough; the folder is left behind when libFuzzer exits, as libFuzzer ends the process with
/// `exit` and nothing is dropped.
pub fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    static FOLDER: OnceLock<PathBuf> = OnceLock::new();
    let folder = FOLDER.get_or_init(|| {
        let folder = std::env::temp_dir().join(format!("flame-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&folder).expect("the temporary folder is writable");
        folder
    });
    let path = folder.join(name);
    std::fs::write(&path, bytes).expect("the scratch file is writable");
    path
}

/// Panics — which libFuzzer reports as a crash — when a draft an importer accepted breaks what
/// `Draft` promises: indexes that point at frames and messages that exist, and a tree that
/// becomes a real one under Flame's invariants (`Draft::materialise` runs
/// `FrameTree::check_invariants`).
pub fn check_draft(draft: &Draft) {
    let frames = draft.frames.len();
    for (i, frame) in draft.frames.iter().enumerate() {
        if let Some(parent) = frame.parent {
            assert!(parent < i, "frame {i} names parent {parent}, which does not come before it");
        }
        if let Some(original) = frame.retry_of {
            assert!(original < frames, "frame {i} retries missing frame {original}");
        }
    }
    for (n, message) in draft.messages.iter().enumerate() {
        assert!(message.frame < frames, "message {n} names missing frame {}", message.frame);
    }
    for (n, call) in draft.calls.iter().enumerate() {
        assert!(call.frame < frames, "model call {n} names missing frame {}", call.frame);
        assert!(
            call.message <= draft.messages.len(),
            "model call {n} names message {} of {}",
            call.message,
            draft.messages.len()
        );
    }
    if let Some(focus) = draft.focus {
        assert!(focus < frames, "the focus names missing frame {focus}");
    }
    if let Err(why) = draft.materialise(&mut IdSource::seeded(7)) {
        panic!("an accepted import does not make a valid tree: {why}");
    }
}

/// The most chunk lengths an SSE input's first byte can announce.
const MAX_CUTS: usize = 16;

/// Decodes `data` as a streamed reply of `kind`, cut into chunks where the input says, and
/// panics when the chunks decode differently from the same bytes in one piece: where a network
/// read happens to end must not change the turn or the error. The input's first byte is a count
/// `n` (modulo [`MAX_CUTS`] + 1), the next `n` bytes are chunk lengths (zero included), and the
/// rest is the stream, its remainder after the announced chunks being the last chunk.
pub fn check_stream(kind: flame_models::ProviderKind, data: &[u8]) {
    let Some((&count, rest)) = data.split_first() else { return };
    let count = usize::from(count) % (MAX_CUTS + 1);
    if rest.len() < count {
        return;
    }
    let (lengths, mut stream) = rest.split_at(count);
    let whole = stream;
    let mut chunks: Vec<&[u8]> = Vec::with_capacity(count + 1);
    for &length in lengths {
        let (chunk, after) = stream.split_at(usize::from(length).min(stream.len()));
        chunks.push(chunk);
        stream = after;
    }
    chunks.push(stream);
    let in_chunks = flame_models::decode_stream(kind, &chunks);
    let in_one_piece = flame_models::decode_stream(kind, &[whole]);
    // `ModelError` has no `PartialEq`; its `Debug` form shows every field, partial turn included.
    assert_eq!(
        format!("{in_chunks:?}"),
        format!("{in_one_piece:?}"),
        "the chunks {chunks:?} decode differently from the whole stream"
    );
}
