//! `file_uploads` (`removeDisplayNameIfExists`): Gemini rejects `displayName` on inline and file
//! data, so it is removed from what the model sees.
//!
//! The request's contents are the session history, which the `contents` processor converts event
//! by event and caches; it applies [`clean_content`] to each event once as it converts it, so that
//! this last step of the seed costs nothing per model call instead of a scan of the whole history.

use adk_core::{Content, PartData};

/// Removes the display names of one content's inline and file data.
pub(crate) fn clean_content(content: &mut Content) {
    for part in &mut content.parts {
        match &mut part.data {
            PartData::InlineData(blob) => blob.display_name = None,
            PartData::FileData(file) => file.display_name = None,
            _ => {}
        }
    }
}
