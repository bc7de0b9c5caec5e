//! Reading one mapping of a config (an agent, the MCP args, the generation settings) with its keys
//! checked as they are read.
//!
//! A derived `Deserialize` with `deny_unknown_fields` already rejects unknown keys, but it cannot
//! explain a key that ADK Python knows and adk-rs cannot honour, and its message says "field".
//! [`Checked`] wraps the derived impl: each key is checked while serde_yaml reads it, so an error
//! points at the key itself; an unknown key is named with the keys allowed there, and an
//! unsupported one with why and what to do instead. Checks that need the whole mapping run after
//! it is read and point at its start.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::scalar::quoted_list;

/// A mapping of the config whose keys are checked as they are read.
pub(crate) trait Section: DeserializeOwned {
    /// How messages name the mapping: `an LlmAgent`, `the McpToolset args`.
    const WHAT: &'static str;

    /// Keys ADK Python accepts here that adk-rs cannot honour, each with a sentence saying why
    /// and what to do instead.
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[];

    /// Keys that must be there.
    const REQUIRED: &'static [&'static str] = &[];

    /// Checks that need the whole mapping; an error is reported at the mapping's start.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Reads a `T` with its keys checked. A [`DeserializeSeed`], so a hand-written visitor can read a
/// value with it, and a serde `deserialize_with` target through [`required`] and [`optional`].
pub(crate) struct Checked<T> {
    what: &'static str,
    marker: PhantomData<fn() -> T>,
}

impl<T: Section> Checked<T> {
    /// Reads a `T`, named in messages as [`Section::WHAT`] says.
    pub(crate) fn new() -> Self {
        Self::named(T::WHAT)
    }

    /// Reads a `T`, named in messages as `what` (for a type that serves several agent classes).
    pub(crate) fn named(what: &'static str) -> Self {
        Self {
            what,
            marker: PhantomData,
        }
    }

    /// Reads a `T` from the entries of a mapping whose reading has begun.
    pub(crate) fn visit_map<'de, A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        let value = T::deserialize(KeyChecking {
            map,
            what: self.what,
            unsupported: T::UNSUPPORTED,
            required: T::REQUIRED,
        })?;
        value.check().map_err(de::Error::custom)?;
        Ok(value)
    }
}

impl<'de, T: Section> DeserializeSeed<'de> for Checked<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T: Section> Visitor<'de> for Checked<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: a mapping of keys to values", self.what)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        Checked::visit_map(self, map)
    }
}

/// A `deserialize_with` target for a field holding a [`Section`].
pub(crate) fn required<'de, D: Deserializer<'de>, T: Section>(
    deserializer: D,
) -> Result<T, D::Error> {
    Checked::<T>::new().deserialize(deserializer)
}

/// A `deserialize_with` target for an optional field holding a [`Section`] (`null` is absent).
pub(crate) fn optional<'de, D: Deserializer<'de>, T: Section>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    Option::<Present<T>>::deserialize(deserializer).map(|value| value.map(|present| present.0))
}

/// A `deserialize_with` target for an optional list of [`Section`]s (`null` is absent).
pub(crate) fn optional_list<'de, D: Deserializer<'de>, T: Section>(
    deserializer: D,
) -> Result<Option<Vec<T>>, D::Error> {
    Option::<Vec<Present<T>>>::deserialize(deserializer)
        .map(|list| list.map(|items| items.into_iter().map(|present| present.0).collect()))
}

/// A [`Section`] that is there, for [`optional`]: serde's `Option` reads `null` as absent and
/// hands anything else to this.
struct Present<T>(T);

impl<'de, T: Section> Deserialize<'de> for Present<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        required(deserializer).map(Present)
    }
}

/// The mapping's entries, seen as a deserializer so the derived impl can read them; it captures
/// the keys the derived impl knows, which it passes to `deserialize_struct`.
struct KeyChecking<A> {
    map: A,
    what: &'static str,
    unsupported: &'static [(&'static str, &'static str)],
    required: &'static [&'static str],
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for KeyChecking<A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_map(self.map)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        visitor.visit_map(CheckedEntries {
            map: self.map,
            keys: Keys {
                what: self.what,
                known: fields,
                unsupported: self.unsupported,
                required: self.required,
            },
            seen: Vec::new(),
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// The keys a mapping allows, and how to explain the others.
#[derive(Clone, Copy)]
pub(crate) struct Keys {
    what: &'static str,
    known: &'static [&'static str],
    unsupported: &'static [(&'static str, &'static str)],
    required: &'static [&'static str],
}

impl Keys {
    /// The keys of a mapping that messages call `what`, for a hand-written visitor that reads
    /// them with [`Keys::next_key`] and checks the required ones itself.
    pub(crate) const fn new(what: &'static str, known: &'static [&'static str]) -> Self {
        Self {
            what,
            known,
            unsupported: &[],
            required: &[],
        }
    }

    /// Whether `key` may come next, after the keys `seen`, or the message that says why not.
    fn check(&self, key: &str, seen: &[String]) -> Result<(), String> {
        if seen.iter().any(|earlier| earlier == key) {
            return Err(format!("the key `{key}` appears twice in {}", self.what));
        }
        if self.known.contains(&key) {
            return Ok(());
        }
        if let Some((_, why)) = self.unsupported.iter().find(|(name, _)| *name == key) {
            return Err(format!("`{key}` cannot be used in adk-rs: {why}"));
        }
        Err(format!(
            "unknown key `{key}` in {}; the keys are {}",
            self.what,
            quoted_list(self.known.iter().copied())
        ))
    }

    /// Whether the keys `seen` hold every required key, or the message naming the first missing.
    fn check_complete(&self, seen: &[String]) -> Result<(), String> {
        match self
            .required
            .iter()
            .find(|key| !seen.iter().any(|earlier| earlier == *key))
        {
            Some(key) => Err(format!(
                "the key `{key}` is missing; {} needs it",
                self.what
            )),
            None => Ok(()),
        }
    }

    /// Reads the next key of `map` as a string, checked, recording it in `seen`.
    pub(crate) fn next_key<'de, A: MapAccess<'de>>(
        &self,
        map: &mut A,
        seen: &mut Vec<String>,
    ) -> Result<Option<String>, A::Error> {
        map.next_key_seed(CheckedKey {
            seed: PhantomData::<String>,
            keys: *self,
            seen,
        })
    }
}

/// The entries of a mapping whose keys are checked before the derived impl sees them.
struct CheckedEntries<A> {
    map: A,
    keys: Keys,
    seen: Vec<String>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CheckedEntries<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let key = self.map.next_key_seed(CheckedKey {
            seed,
            keys: self.keys,
            seen: &mut self.seen,
        })?;
        if key.is_none() {
            // The end of the mapping: serde_yaml still places an error raised here at its start.
            self.keys
                .check_complete(&self.seen)
                .map_err(de::Error::custom)?;
        }
        Ok(key)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// One key, checked inside serde_yaml's reading of it so that an error points at the key, then
/// handed to `seed`, the reader of the key it stands for.
struct CheckedKey<'a, K> {
    seed: K,
    keys: Keys,
    seen: &'a mut Vec<String>,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for CheckedKey<'_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<K::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, K: DeserializeSeed<'de>> Visitor<'de> for CheckedKey<'_, K> {
    type Value = K::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a key of {}", self.keys.what)
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<K::Value, E> {
        self.keys.check(key, self.seen).map_err(E::custom)?;
        self.seen.push(key.to_owned());
        self.seed.deserialize(StrDeserializer::<E>::new(key))
    }
}
