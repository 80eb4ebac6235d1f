//! The name of a workspace's shadow folder.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// How many characters of the workspace's folder name the shadow's name repeats.
const TAIL_CHARS: usize = 32;

/// The folder name under Flame's `checkpoints/` for a workspace: 12 hexadecimal digits of a
/// stable hash (64-bit FNV-1a, defined here so that it never changes with a library or a Rust
/// release) of its canonical path, then `-` and its last component with characters other than
/// letters, digits, `.`, `_` and `-` replaced by `_`; e.g. `a1b2c3d4e5f6-myproject`.
pub fn shadow_folder_name(workspace: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in workspace.as_os_str().as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let tail: String = workspace
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .take(TAIL_CHARS)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect();
    let tail = tail.trim_start_matches('.');
    let tail = if tail.is_empty() { "root" } else { tail };
    format!("{:012x}-{tail}", hash >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_stable_and_readable() {
        assert_eq!(
            shadow_folder_name(Path::new("/home/ann/my project")),
            shadow_folder_name(Path::new("/home/ann/my project"))
        );
        let name = shadow_folder_name(Path::new("/home/ann/my project"));
        assert!(name.ends_with("-my_project"), "{name}");
        assert_eq!(name.len(), 12 + 1 + "my_project".len());
        assert_ne!(name, shadow_folder_name(Path::new("/home/bob/my project")));
        assert!(shadow_folder_name(Path::new("/")).ends_with("-root"));
        assert!(shadow_folder_name(Path::new("/srv/..")).ends_with("-root"));
        assert!(shadow_folder_name(Path::new("/srv/.hidden")).ends_with("-hidden"));
    }

    #[test]
    fn the_hash_is_fnv_1a() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c; the name keeps its top 48 bits.
        assert!(shadow_folder_name(Path::new("a")).starts_with("af63dc4c8601-"));
    }
}
