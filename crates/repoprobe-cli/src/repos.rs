//! The flags that say where a question's repository comes from, shared by the commands that
//! check repositories out (`answer`, `evidence`): the clone cache, local clones by name, and
//! whether an unpinned question may use the clone's HEAD.

use repoprobe_agent::workspace::RepoSource;
use std::path::PathBuf;

#[derive(Debug, Default, Clone, clap::Args)]
pub struct RepoArgs {
    /// The cache of repository clones (one bare clone per repository, cloned on first use).
    #[arg(long, value_name = "DIR")]
    pub clone_cache: PathBuf,
    /// Take a repository from a local clone instead of its url (offline): owner/name=PATH;
    /// repeatable.
    #[arg(long = "repo-map")]
    pub repo_map: Vec<String>,
    /// Let a question without a pinned commit use the clone's HEAD (the record or the report
    /// says so).
    #[arg(long)]
    pub allow_unpinned: bool,
}

impl RepoArgs {
    /// The repositories' source these flags describe; a `--repo-map` that does not read is an
    /// error naming it.
    pub fn source(&self) -> anyhow::Result<RepoSource> {
        let mut source = RepoSource::new(&self.clone_cache).allow_head(self.allow_unpinned);
        for m in &self.repo_map {
            let (name, path) =
                RepoSource::parse_map_arg(m).map_err(|e| anyhow::anyhow!("--repo-map: {e}"))?;
            source = source.map_repo(name, path);
        }
        Ok(source)
    }
}
