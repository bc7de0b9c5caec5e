//! `file_uploads` (`removeDisplayNameIfExists`): Gemini rejects `displayName` on inline and file
//! data, so it is removed from what the model sees.
//!
//! The request's contents are the session history, which the `contents` processor converts event
//! by event and caches; it applies [`clean_content`] to each event once as it converts it, so that
//! this last request processor costs nothing per model call instead of a scan of the whole history.

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

#[cfg(test)]
mod tests {
    use adk_core::{Blob, FileData, Part, PartData, Role};

    use super::*;

    #[test]
    fn display_names_are_removed_and_the_rest_kept() {
        let mut blob = Blob::new("image/png", vec![1, 2]);
        blob.display_name = Some("chart.png".into());
        let file = FileData {
            file_uri: "gs://bucket/report.pdf".into(),
            mime_type: Some("application/pdf".into()),
            display_name: Some("report".into()),
        };
        let mut content = Content::new(
            Role::User,
            [
                Part::new(PartData::InlineData(blob)),
                Part::new(PartData::FileData(file)),
            ],
        );
        clean_content(&mut content);
        assert_eq!(
            serde_json::to_value(&content).unwrap(),
            serde_json::json!({"parts": [
                {"inlineData": {"mimeType": "image/png", "data": "AQI="}},
                {"fileData": {"fileUri": "gs://bucket/report.pdf", "mimeType": "application/pdf"}}
            ], "role": "user"})
        );
    }
}
