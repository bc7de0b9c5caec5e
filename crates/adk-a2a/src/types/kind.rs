//! The `kind` markers of tagged protocol objects: zero-sized types that always write their tag and,
//! on input, accept it or its absence but no other tag.

macro_rules! kind_marker {
    ($(#[$doc:meta])* $name:ident, $tag:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub(crate) struct $name;

        impl $name {
            /// The tag this marker writes.
            pub(crate) const TAG: &'static str = $tag;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($tag)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let tag = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
                if tag == $tag {
                    Ok(Self)
                } else {
                    Err(serde::de::Error::custom(format!(
                        "expected kind \"{}\", found \"{tag}\"",
                        $tag
                    )))
                }
            }
        }
    };
}

kind_marker!(
    /// `"kind": "message"`.
    MessageKind,
    "message"
);
kind_marker!(
    /// `"kind": "task"`.
    TaskKind,
    "task"
);
kind_marker!(
    /// `"kind": "status-update"`.
    StatusUpdateKind,
    "status-update"
);
kind_marker!(
    /// `"kind": "artifact-update"`.
    ArtifactUpdateKind,
    "artifact-update"
);

/// The `kind` of a JSON object, for dispatching a union of tagged objects.
pub(crate) fn kind_of(value: &serde_json::Value) -> Option<&str> {
    value.get("kind").and_then(serde_json::Value::as_str)
}
