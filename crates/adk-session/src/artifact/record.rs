//! One stored version of an artifact: its bytes and its metadata, as every backend keeps them.

use adk_core::{ArtifactVersion, Part, PartData};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The metadata of a version, stored as JSON beside the bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Meta {
    pub(crate) version: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mime_type: Option<String>,
    #[serde(default)]
    pub(crate) custom_metadata: Map<String, Value>,
    pub(crate) create_time: f64,
    /// The saved part; for inline data its bytes are left out here and kept in the body.
    pub(crate) part: Part,
}

/// A version: metadata and body (the inline bytes, empty for other kinds of part).
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(crate) meta: Meta,
    pub(crate) body: Bytes,
}

impl Record {
    /// Version `version` of `part`, saved at `create_time`.
    pub(crate) fn new(
        mut part: Part,
        version: u64,
        custom_metadata: Map<String, Value>,
        create_time: f64,
    ) -> Self {
        let (mime_type, body) = match &mut part.data {
            PartData::InlineData(blob) => {
                (Some(blob.mime_type.clone()), std::mem::take(&mut blob.data))
            }
            PartData::FileData(file) => (file.mime_type.clone(), Bytes::new()),
            PartData::Text(_) => (Some("text/plain".to_owned()), Bytes::new()),
            _ => (None, Bytes::new()),
        };
        Self {
            meta: Meta {
                version,
                mime_type,
                custom_metadata,
                create_time,
                part,
            },
            body,
        }
    }

    /// Rebuilds a record from stored metadata JSON and body.
    pub(crate) fn from_stored(meta: &[u8], body: Bytes) -> Result<Self> {
        let meta = serde_json::from_slice(meta)
            .map_err(|error| Error::corrupt("artifact metadata", error))?;
        Ok(Self { meta, body })
    }

    /// The metadata as stored.
    pub(crate) fn meta_json(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(&self.meta).map_err(|error| Error::corrupt("artifact metadata", error))
    }

    /// The part as it was saved.
    pub(crate) fn into_part(self) -> Part {
        let mut part = self.meta.part;
        if let PartData::InlineData(blob) = &mut part.data {
            blob.data = self.body;
        }
        part
    }
}

/// What callers see of a version's metadata.
pub(crate) fn version_info(meta: &Meta, canonical_uri: Option<String>) -> ArtifactVersion {
    let mut info = ArtifactVersion::new(meta.version, meta.create_time);
    info.mime_type = meta.mime_type.clone();
    info.custom_metadata = meta.custom_metadata.clone();
    info.canonical_uri = canonical_uri;
    info
}
