//! The fetcher's DNS: the system resolver (`getaddrinfo`, through tokio's `lookup_host`, so
//! `/etc/hosts` counts: `localhost` is 127.0.0.1), and a lookup refused whole when any address
//! it gives is one [`refusal`] refuses. reqwest connects to the addresses this returns and no
//! others, so what was checked is what is dialled: a name that answers a public address to a
//! first look and a loopback one to the next (DNS rebinding) is checked at the lookup that
//! counts. IP-literal hosts never reach a resolver; the fetcher checks them itself.

use repoprobe_curate::address::refusal;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};

/// Why a lookup gave no address to connect to: found in a request's error chain by the fetcher
/// and told as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("{host} resolves to {ip}, {why}: refused")]
    Address {
        host: String,
        ip: IpAddr,
        why: String,
    },
    #[error("{host} is not the host of any --allow-host: refused")]
    NotAllowed { host: String },
    #[error("{host} has no address")]
    NoAddress { host: String },
}

/// The resolver of one of the fetcher's two clients.
pub enum Resolver {
    /// Every address checked: the client of every host not allowed.
    Checked,
    /// These names only (`--allow-host`'s, lower case), unchecked: the client of the allowed
    /// hosts, which the fetcher only hands a URL whose host and port are allowed.
    Allowed(HashSet<String>),
}

impl Resolve for Resolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let allowed = match self {
            Resolver::Checked => None,
            Resolver::Allowed(names) => Some(names.contains(&host)),
        };
        Box::pin(async move {
            if allowed == Some(false) {
                return Err(Refused::NotAllowed { host }.into());
            }
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if addrs.is_empty() {
                return Err(Refused::NoAddress { host }.into());
            }
            if allowed.is_none() {
                for a in &addrs {
                    if let Some(why) = refusal(a.ip()) {
                        return Err(Refused::Address {
                            host,
                            ip: a.ip(),
                            why,
                        }
                        .into());
                    }
                }
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The refusal in an error's chain, if it is one.
pub fn refused_in(e: &(dyn std::error::Error + 'static)) -> Option<Refused> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<Refused>() {
            return Some(r.clone());
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    // `localhost` is in /etc/hosts: no DNS server is asked, nothing is connected to.
    #[test]
    fn localhost_is_refused_for_its_loopback_address() {
        let e = rt()
            .block_on(Resolver::Checked.resolve(Name::from_str("localhost").unwrap()))
            .err()
            .unwrap();
        let r = refused_in(&*e).unwrap();
        let text = r.to_string();
        assert!(
            text.starts_with("localhost resolves to ")
                && text.ends_with("a loopback address: refused"),
            "{text}"
        );
    }

    #[test]
    fn the_allowed_resolver_resolves_its_names_only() {
        let allowed = Resolver::Allowed(["localhost".to_string()].into());
        let addrs: Vec<SocketAddr> = rt()
            .block_on(allowed.resolve(Name::from_str("LocalHost").unwrap()))
            .map_err(|e| e.to_string())
            .unwrap()
            .collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()) && !addrs.is_empty());
        let e = rt()
            .block_on(allowed.resolve(Name::from_str("example.com").unwrap()))
            .err()
            .unwrap();
        assert_eq!(
            refused_in(&*e),
            Some(Refused::NotAllowed {
                host: "example.com".into()
            })
        );
    }
}
