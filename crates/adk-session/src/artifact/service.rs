//! The artifact services' one implementation of [`adk_core::ArtifactService`], over the
//! [`ArtifactStore`](super::store::ArtifactStore) each holds: names are validated, then the store
//! is called, and this crate's errors become [`adk_core::Error`]s of the artifact kind in one
//! place.

/// Implements [`adk_core::ArtifactService`] for `$service`, whose field `$store` is an
/// [`ArtifactStore`](super::store::ArtifactStore): names are validated here, before
/// the store sees them.
macro_rules! artifact_service {
    ($service:ty, $store:ident) => {
        #[async_trait::async_trait]
        impl adk_core::ArtifactService for $service {
            async fn save_artifact(
                &self,
                session: &adk_core::SessionKey,
                filename: &str,
                artifact: adk_core::Part,
                custom_metadata: serde_json::Map<String, serde_json::Value>,
            ) -> adk_core::Result<u64> {
                let path = $crate::artifact::validate::artifact_path(session, filename)
                    .map_err($crate::error::Error::into_artifact)?;
                self.$store
                    .save(&path, artifact, custom_metadata)
                    .await
                    .map_err($crate::error::Error::into_artifact)
            }

            async fn load_artifact(
                &self,
                session: &adk_core::SessionKey,
                filename: &str,
                version: Option<u64>,
            ) -> adk_core::Result<Option<adk_core::Part>> {
                let path = $crate::artifact::validate::artifact_path(session, filename)
                    .map_err($crate::error::Error::into_artifact)?;
                self.$store
                    .load(&path, version)
                    .await
                    .map_err($crate::error::Error::into_artifact)
            }

            async fn list_artifact_keys(
                &self,
                session: &adk_core::SessionKey,
            ) -> adk_core::Result<Vec<String>> {
                $crate::artifact::validate::validate_session(session)
                    .map_err($crate::error::Error::into_artifact)?;
                self.$store
                    .keys(session)
                    .await
                    .map_err($crate::error::Error::into_artifact)
            }

            async fn delete_artifact(
                &self,
                session: &adk_core::SessionKey,
                filename: &str,
            ) -> adk_core::Result<()> {
                let path = $crate::artifact::validate::artifact_path(session, filename)
                    .map_err($crate::error::Error::into_artifact)?;
                self.$store
                    .delete(&path)
                    .await
                    .map_err($crate::error::Error::into_artifact)
            }

            async fn list_versions(
                &self,
                session: &adk_core::SessionKey,
                filename: &str,
            ) -> adk_core::Result<Vec<u64>> {
                let path = $crate::artifact::validate::artifact_path(session, filename)
                    .map_err($crate::error::Error::into_artifact)?;
                self.$store
                    .versions(&path)
                    .await
                    .map_err($crate::error::Error::into_artifact)
            }

            async fn artifact_version(
                &self,
                session: &adk_core::SessionKey,
                filename: &str,
                version: Option<u64>,
            ) -> adk_core::Result<Option<adk_core::ArtifactVersion>> {
                let path = $crate::artifact::validate::artifact_path(session, filename)
                    .map_err($crate::error::Error::into_artifact)?;
                self.$store
                    .version(&path, version)
                    .await
                    .map_err($crate::error::Error::into_artifact)
            }
        }
    };
}
pub(super) use artifact_service;
