//! Validation of the names that become storage paths: app names, user ids, session ids and
//! artifact file names. Whatever passes is one plain path component, so no artifact outside the
//! caller's own app, user and session can be named.

use adk_core::{SessionKey, USER_PREFIX};

use crate::error::{Error, ErrorKind, Result};

/// The longest name accepted, in bytes (a common filesystem limit for one component).
const MAX_LEN: usize = 255;

/// Percent-encoded characters that would decode to a separator, a dot or NUL somewhere down the
/// line (an object store or an HTTP layer that decodes names).
const ENCODED: [&str; 4] = ["%2f", "%5c", "%2e", "%00"];

/// Whose artifact a name is: the session's own, or the user's (`user:` names).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Owner {
    /// The session of this id.
    Session(String),
    /// Every session of the user.
    User,
}

/// A validated artifact location: app, user, owner and file name (without `user:`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ArtifactPath {
    pub(crate) app: String,
    pub(crate) user: String,
    pub(crate) owner: Owner,
    pub(crate) name: String,
}

impl ArtifactPath {
    /// The file name as callers see it (`user:` names keep their prefix).
    pub(crate) fn filename(&self) -> String {
        display_name(&self.owner, &self.name)
    }
}

/// The file name callers see for `name` owned by `owner`.
pub(crate) fn display_name(owner: &Owner, name: &str) -> String {
    match owner {
        Owner::Session(_) => name.to_owned(),
        Owner::User => format!("{USER_PREFIX}{name}"),
    }
}

/// Validates `session`'s ids and `filename`, and says where the artifact lives.
pub(crate) fn artifact_path(session: &SessionKey, filename: &str) -> Result<ArtifactPath> {
    validate_session(session)?;
    let (owner, name) = match filename.strip_prefix(USER_PREFIX) {
        Some(name) => (Owner::User, name),
        None => (
            Owner::Session(session.session_id.as_str().to_owned()),
            filename,
        ),
    };
    check("artifact file name", name)?;
    Ok(ArtifactPath {
        app: session.app_name.clone(),
        user: session.user_id.clone(),
        owner,
        name: name.to_owned(),
    })
}

/// Validates the app name, user id and session id of `session`.
pub(crate) fn validate_session(session: &SessionKey) -> Result<()> {
    check("app name", &session.app_name)?;
    check("user id", &session.user_id)?;
    check("session id", session.session_id.as_str())
}

/// Checks that `value` is one safe path component.
fn check(what: &str, value: &str) -> Result<()> {
    let reason = if value.is_empty() {
        Some("it is empty")
    } else if value.len() > MAX_LEN {
        Some("it is longer than 255 bytes")
    } else if value == "." || value == ".." {
        Some("it names a directory")
    } else if value.contains(['/', '\\']) {
        Some("it contains a path separator")
    } else if value.contains(':') {
        Some("it contains ':' (a drive or stream prefix)")
    } else if value.chars().any(char::is_control) {
        Some("it contains a control character or NUL")
    } else if ENCODED
        .iter()
        .any(|encoded| value.to_ascii_lowercase().contains(encoded))
    {
        Some("it contains a percent-encoded separator, dot or NUL")
    } else {
        None
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(Error::new(
            ErrorKind::InvalidName,
            format!(
                "{what} {value:?} was rejected: {reason}; use a plain name without separators, \
                 '..' or ':' (only a leading 'user:' is allowed in file names)"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SessionKey {
        SessionKey::new("app", "ada", "s1")
    }

    #[test]
    fn plain_names_pass_and_user_names_are_shared() {
        let path = artifact_path(&key(), "report 2026 (final) ✓.pdf").unwrap();
        assert_eq!(path.owner, Owner::Session("s1".into()));
        let shared = artifact_path(&key(), "user:avatar.png").unwrap();
        assert_eq!(shared.owner, Owner::User);
        assert_eq!(shared.name, "avatar.png");
        assert_eq!(shared.filename(), "user:avatar.png");
        assert!(artifact_path(&key(), "100%.txt").is_ok());
    }

    #[test]
    fn traversal_and_separators_are_rejected() {
        for name in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "a\\b",
            "/etc/passwd",
            "C:\\x",
            "C:x",
            "user:",
            "user:..",
            "user:../../other/x",
            "user:user:x",
            "..%2fx",
            "%2E%2E",
            "a%5Cb",
            "a%00b",
            "a\0b",
            "a\nb",
        ] {
            let error = artifact_path(&key(), name).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::InvalidName, "{name:?}");
        }
        let long = "x".repeat(256);
        assert!(artifact_path(&key(), &long).is_err());
    }

    #[test]
    fn ids_are_checked_too() {
        for session in [
            SessionKey::new("..", "ada", "s1"),
            SessionKey::new("app", "../bob", "s1"),
            SessionKey::new("app", "ada", "/s1"),
            SessionKey::new("app", "", "s1"),
            SessionKey::new("app", "ada", "s1%2F..%2F"),
        ] {
            assert!(artifact_path(&session, "x.txt").is_err(), "{session:?}");
        }
    }

    mod properties {
        //! Names valid by construction pass and are one plain path component each; names made
        //! invalid by construction (one forbidden piece put into a valid name, or an empty, dot
        //! or overlong name) are refused, in any position. Every case asserts.

        use std::path::{Component, Path};

        use proptest::prelude::*;

        use super::*;

        /// Cases per property.
        const CASES: u32 = 2048;

        /// A valid name: pieces that no concatenation can turn into a separator, ':', a control
        /// character or a percent-encoded separator, dot or NUL (`%` is always followed by a
        /// character that is not a hex digit). At most 40 pieces of at most 6 bytes: under the
        /// 255-byte limit. A name of dots alone (`.`, `..`) gets a letter in front.
        fn valid_name() -> impl Strategy<Value = String> {
            prop::collection::vec(
                prop::sample::select(vec![
                    "a", "Z", "0", "9", "-", "_", ".", "..", " ", "%z", "% ", "%%z", "é", "報",
                    "🎉", "(", ")", "'", "user", "2f", "%g0", "~", "#1",
                ]),
                1..40,
            )
            .prop_map(|pieces| {
                let name = pieces.concat();
                if name.chars().all(|c| c == '.') && name.len() <= 2 {
                    format!("a{name}")
                } else {
                    name
                }
            })
        }

        /// What makes a name invalid, put into a valid one at `at` (a char boundary is found).
        fn invalid_name() -> impl Strategy<Value = String> {
            let forbidden = prop::sample::select(vec![
                "/", "\\", ":", "\0", "\n", "\u{7f}", "\u{85}", "%2f", "%2F", "%5c", "%5C", "%2e",
                "%2E", "%00", "../", "..\\",
            ]);
            prop_oneof![
                4 => (valid_name(), forbidden, any::<prop::sample::Index>()).prop_map(
                    |(name, piece, at)| {
                        let mut at = at.index(name.len() + 1);
                        while !name.is_char_boundary(at) {
                            at -= 1;
                        }
                        format!("{}{piece}{}", &name[..at], &name[at..])
                    }
                ),
                1 => prop::sample::select(vec![String::new(), ".".into(), "..".into()]),
                1 => (valid_name(), 256usize..400).prop_map(|(name, len)| {
                    name.chars().cycle().take(len).collect::<String>()
                }).prop_filter("longer than 255 bytes", |name| name.len() > MAX_LEN),
            ]
        }

        /// Asserts that `component` is one plain path component.
        fn assert_plain(component: &str) -> Result<(), TestCaseError> {
            let mut components = Path::new(component).components();
            prop_assert!(
                matches!(components.next(), Some(Component::Normal(_))),
                "{component:?}"
            );
            prop_assert!(components.next().is_none(), "{component:?}");
            prop_assert!(!component.contains(['/', '\\', ':', '\0']), "{component:?}");
            prop_assert!(component.len() <= MAX_LEN);
            let lower = component.to_ascii_lowercase();
            prop_assert!(!ENCODED.iter().any(|encoded| lower.contains(encoded)));
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(CASES))]

            #[test]
            fn valid_names_pass_as_one_plain_path_component_each(
                app in valid_name(),
                user in valid_name(),
                session in valid_name(),
                name in valid_name(),
                shared in any::<bool>(),
            ) {
                let filename = if shared { format!("{USER_PREFIX}{name}") } else { name.clone() };
                let key = SessionKey::new(app, user, session.as_str());
                let path = artifact_path(&key, &filename)
                    .map_err(|error| TestCaseError::fail(format!("{filename:?}: {error}")))?;
                for component in [&path.app, &path.user, &path.name, &session] {
                    assert_plain(component)?;
                }
                prop_assert_eq!(&path.name, &name);
                prop_assert_eq!(path.owner == Owner::User, shared);
                prop_assert_eq!(path.filename(), filename);
            }

            #[test]
            fn invalid_names_are_refused_in_every_position(
                bad in invalid_name(),
                valid in valid_name(),
                position in 0..4usize,
                shared in any::<bool>(),
            ) {
                let mut parts = [valid.clone(), valid.clone(), valid.clone(), valid];
                parts[position] = bad.clone();
                let [app, user, session, name] = parts;
                // A file name that starts with `user:` names the user's file after the prefix:
                // the bad part is always what follows it.
                let filename = if shared || name.starts_with(USER_PREFIX) {
                    format!("{USER_PREFIX}{name}")
                } else {
                    name
                };
                let key = SessionKey::new(app, user, session);
                let error = artifact_path(&key, &filename)
                    .err()
                    .ok_or_else(|| TestCaseError::fail(format!("{bad:?} was accepted")))?;
                prop_assert_eq!(error.kind(), ErrorKind::InvalidName);
            }
        }
    }
}
