//! Which IP addresses `curate enhance` must never connect to, and why.
//!
//! A thread's links are written by strangers, and so are the pages they redirect to and the DNS
//! records of their hosts: a link may point at the machine itself (`http://127.0.0.1:8080/admin`),
//! at the network it stands in (`http://10.0.0.1/`), or at a cloud's instance metadata service
//! (`http://169.254.169.254/latest/meta-data/`, which hands out credentials to whoever asks from
//! inside the instance). The fetcher asks [`refusal`] of every address it would connect to — an
//! IP-literal host, and every address a name resolves to, at every redirect — and the link
//! finder ([`crate::links`]) of every IP-literal link.
//!
//! The rule is a deny-list of the special-purpose ranges (IANA's registries of IPv4 and IPv6
//! special-purpose addresses) for IPv4, and for IPv6 the same plus everything outside global
//! unicast (`2000::/3`, where all of the public IPv6 Internet is): an address nobody has a use
//! for on the public Internet is refused rather than guessed about. Addresses that carry an IPv4
//! address inside (NAT64, 6to4) are judged by the address they carry; IPv4-mapped and
//! IPv4-compatible ones, and Teredo, are refused whole (a public server has no reason to be
//! reached that way, and a mapped address is how a filter of IPv4 ranges is slipped past).
//!
//! Pure: nothing here resolves or connects.

// `core::net`: the address types are values (std re-exports these); std's sockets and name
// lookup are what the core never names.
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` must not be connected to, as a noun phrase ("a loopback address"), or `None` when it
/// is a public address.
pub fn refusal(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4).map(str::to_string),
        IpAddr::V6(v6) => refusal_v6(v6),
    }
}

/// An IPv4 range: a first address and a prefix length.
struct Range4(Ipv4Addr, u8, &'static str);

/// The special-purpose IPv4 ranges, most specific first (the metadata addresses before their
/// ranges, so the message names them).
const REFUSED_V4: &[Range4] = &[
    Range4(
        Ipv4Addr::new(169, 254, 169, 254),
        32,
        "the cloud instance metadata address",
    ),
    Range4(
        Ipv4Addr::new(100, 100, 100, 200),
        32,
        "Alibaba Cloud's instance metadata address",
    ),
    Range4(Ipv4Addr::new(0, 0, 0, 0), 32, "the unspecified address"),
    Range4(
        Ipv4Addr::new(255, 255, 255, 255),
        32,
        "the broadcast address",
    ),
    Range4(
        Ipv4Addr::new(0, 0, 0, 0),
        8,
        "an address of \"this network\" (0.0.0.0/8)",
    ),
    Range4(
        Ipv4Addr::new(10, 0, 0, 0),
        8,
        "a private address (10.0.0.0/8)",
    ),
    Range4(
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        "a carrier-grade NAT address (100.64.0.0/10)",
    ),
    Range4(Ipv4Addr::new(127, 0, 0, 0), 8, "a loopback address"),
    Range4(
        Ipv4Addr::new(169, 254, 0, 0),
        16,
        "a link-local address (169.254.0.0/16)",
    ),
    Range4(
        Ipv4Addr::new(172, 16, 0, 0),
        12,
        "a private address (172.16.0.0/12)",
    ),
    Range4(
        Ipv4Addr::new(192, 0, 0, 0),
        24,
        "an IETF protocol assignment (192.0.0.0/24)",
    ),
    Range4(
        Ipv4Addr::new(192, 0, 2, 0),
        24,
        "a documentation address (192.0.2.0/24)",
    ),
    Range4(
        Ipv4Addr::new(192, 88, 99, 0),
        24,
        "the former 6to4 relay anycast (192.88.99.0/24)",
    ),
    Range4(
        Ipv4Addr::new(192, 168, 0, 0),
        16,
        "a private address (192.168.0.0/16)",
    ),
    Range4(
        Ipv4Addr::new(198, 18, 0, 0),
        15,
        "a benchmarking address (198.18.0.0/15)",
    ),
    Range4(
        Ipv4Addr::new(198, 51, 100, 0),
        24,
        "a documentation address (198.51.100.0/24)",
    ),
    Range4(
        Ipv4Addr::new(203, 0, 113, 0),
        24,
        "a documentation address (203.0.113.0/24)",
    ),
    Range4(
        Ipv4Addr::new(224, 0, 0, 0),
        4,
        "a multicast address (224.0.0.0/4)",
    ),
    Range4(
        Ipv4Addr::new(240, 0, 0, 0),
        4,
        "a reserved address (240.0.0.0/4)",
    ),
];

fn refusal_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    REFUSED_V4
        .iter()
        .find(|Range4(first, len, _)| {
            prefix_matches(bits.into(), u32::from(*first).into(), *len, 32)
        })
        .map(|Range4(_, _, why)| *why)
}

/// An IPv6 range: a first address and a prefix length.
struct Range6(Ipv6Addr, u8, &'static str);

const fn v6(segments: [u16; 8]) -> Ipv6Addr {
    let [a, b, c, d, e, f, g, h] = segments;
    Ipv6Addr::new(a, b, c, d, e, f, g, h)
}

/// The special-purpose IPv6 ranges refused whatever they hold, most specific first.
const REFUSED_V6: &[Range6] = &[
    Range6(
        v6([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254]),
        128,
        "AWS's IPv6 instance metadata address",
    ),
    Range6(Ipv6Addr::UNSPECIFIED, 128, "the unspecified address"),
    Range6(Ipv6Addr::LOCALHOST, 128, "a loopback address"),
    Range6(
        v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0]),
        48,
        "a local-use NAT64 address (64:ff9b:1::/48)",
    ),
    Range6(
        v6([0x100, 0, 0, 0, 0, 0, 0, 0]),
        64,
        "a discard-only address (100::/64)",
    ),
    Range6(
        v6([0x2001, 0, 0, 0, 0, 0, 0, 0]),
        32,
        "a Teredo tunnel address (2001::/32)",
    ),
    Range6(
        v6([0x2001, 2, 0, 0, 0, 0, 0, 0]),
        48,
        "a benchmarking address (2001:2::/48)",
    ),
    Range6(
        v6([0x2001, 0x10, 0, 0, 0, 0, 0, 0]),
        28,
        "an ORCHID address (2001:10::/28)",
    ),
    Range6(
        v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0]),
        28,
        "an ORCHIDv2 address (2001:20::/28)",
    ),
    Range6(
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]),
        32,
        "a documentation address (2001:db8::/32)",
    ),
    Range6(
        v6([0x3fff, 0, 0, 0, 0, 0, 0, 0]),
        20,
        "a documentation address (3fff::/20)",
    ),
    Range6(
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0]),
        7,
        "a unique local address (fc00::/7)",
    ),
    Range6(
        v6([0xfe80, 0, 0, 0, 0, 0, 0, 0]),
        10,
        "a link-local address (fe80::/10)",
    ),
    Range6(
        v6([0xfec0, 0, 0, 0, 0, 0, 0, 0]),
        10,
        "a site-local address (fec0::/10)",
    ),
    Range6(
        v6([0xff00, 0, 0, 0, 0, 0, 0, 0]),
        8,
        "a multicast address (ff00::/8)",
    ),
];

fn refusal_v6(ip: Ipv6Addr) -> Option<String> {
    let bits = u128::from(ip);
    if let Some(Range6(_, _, why)) = REFUSED_V6
        .iter()
        .find(|Range6(first, len, _)| prefix_matches(bits, u128::from(*first), *len, 128))
    {
        return Some(why.to_string());
    }
    let seg = ip.segments();
    // ::ffff:a.b.c.d and the deprecated ::a.b.c.d: refused whole, naming what they carry.
    if let Some(kind) = match seg {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some("an IPv4-mapped"),
        [0, 0, 0, 0, 0, 0, _, _] => Some("an IPv4-compatible"),
        _ => None,
    } {
        let inner = Ipv4Addr::from(bits as u32);
        return Some(match refusal_v4(inner) {
            Some(why) => format!("{kind} IPv6 address of {inner}, {why}"),
            None => format!("{kind} IPv6 address (of {inner})"),
        });
    }
    // NAT64 (64:ff9b::/96, the IPv4 address in the last 32 bits) and 6to4 (2002::/16, in bits
    // 16–48) reach the IPv4 address they carry: judged by it.
    let carried = if prefix_matches(
        bits,
        u128::from(v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0])),
        96,
        128,
    ) {
        Some(("a NAT64", Ipv4Addr::from(bits as u32)))
    } else if seg[0] == 0x2002 {
        Some(("a 6to4", Ipv4Addr::from((bits >> 80) as u32)))
    } else {
        None
    };
    if let Some((kind, inner)) = carried {
        return refusal_v4(inner).map(|why| format!("{kind} address of {inner}, {why}"));
    }
    if seg[0] & 0xe000 != 0x2000 {
        return Some("outside the global unicast range of IPv6 (2000::/3)".to_string());
    }
    None
}

/// Whether the first `len` bits of `bits` and `first` agree, for addresses of `width` bits
/// (right-aligned in a `u128`).
fn prefix_matches(bits: u128, first: u128, len: u8, width: u8) -> bool {
    let len = u32::from(len.min(width));
    if len == 0 {
        return true;
    }
    let shift = u32::from(width) - len;
    (bits >> shift) == (first >> shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(ip: &str) -> Option<String> {
        refusal(ip.parse().unwrap_or_else(|_| panic!("an address: {ip}")))
    }

    #[test]
    fn every_special_ipv4_range_is_refused_with_its_name() {
        for (ip, expected) in [
            ("0.0.0.0", "the unspecified address"),
            ("0.1.2.3", "this network"),
            ("0.255.255.255", "this network"),
            ("10.0.0.0", "private address (10.0.0.0/8)"),
            ("10.255.255.255", "private address (10.0.0.0/8)"),
            ("100.64.0.0", "carrier-grade NAT"),
            ("100.127.255.255", "carrier-grade NAT"),
            (
                "100.100.100.200",
                "Alibaba Cloud's instance metadata address",
            ),
            ("127.0.0.1", "a loopback address"),
            ("127.0.0.2", "a loopback address"),
            ("127.255.255.254", "a loopback address"),
            ("169.254.0.1", "a link-local address"),
            ("169.254.170.2", "a link-local address"),
            ("169.254.169.254", "the cloud instance metadata address"),
            ("172.16.0.1", "private address (172.16.0.0/12)"),
            ("172.31.255.255", "private address (172.16.0.0/12)"),
            ("192.0.0.1", "IETF protocol assignment"),
            ("192.0.0.192", "IETF protocol assignment"),
            ("192.0.2.1", "documentation address (192.0.2.0/24)"),
            ("192.88.99.1", "6to4 relay anycast"),
            ("192.168.0.1", "private address (192.168.0.0/16)"),
            ("192.168.255.255", "private address (192.168.0.0/16)"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.255", "benchmarking"),
            ("198.51.100.7", "documentation address (198.51.100.0/24)"),
            ("203.0.113.9", "documentation address (203.0.113.0/24)"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved"),
            ("254.255.255.255", "reserved"),
            ("255.255.255.255", "the broadcast address"),
        ] {
            let got = why(ip).unwrap_or_else(|| panic!("{ip} must be refused"));
            assert!(
                got.contains(expected),
                "{ip}: {got:?} should say {expected:?}"
            );
        }
    }

    #[test]
    fn public_ipv4_addresses_pass_even_next_to_a_refused_range() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.1",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "169.255.0.0",
            "172.15.255.255",
            "172.32.0.1",
            "192.0.1.1",
            "192.0.3.1",
            "192.167.255.255",
            "192.169.0.1",
            "198.17.255.255",
            "198.20.0.0",
            "198.51.101.1",
            "203.0.114.1",
            "223.255.255.255",
            "140.82.112.3",
        ] {
            assert_eq!(why(ip), None, "{ip} is public");
        }
    }

    #[test]
    fn every_special_ipv6_range_is_refused_with_its_name() {
        for (ip, expected) in [
            ("::", "the unspecified address"),
            ("::1", "a loopback address"),
            ("fc00::1", "unique local"),
            ("fd12:3456::1", "unique local"),
            ("fd00:ec2::254", "AWS's IPv6 instance metadata address"),
            ("fe80::1", "link-local"),
            ("febf:ffff::1", "link-local"),
            ("fec0::1", "site-local"),
            ("feff::1", "site-local"),
            ("ff02::1", "multicast"),
            ("ff0e::fb", "multicast"),
            ("2001:db8::1", "documentation address (2001:db8::/32)"),
            ("2001:db8:ffff::1", "documentation"),
            ("3fff:0fff::1", "documentation address (3fff::/20)"),
            ("2001::1", "Teredo"),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
            ("2001:2::1", "benchmarking"),
            ("2001:10::1", "ORCHID"),
            ("2001:20::1", "ORCHIDv2"),
            ("100::1", "discard-only"),
            ("64:ff9b:1::1", "local-use NAT64"),
            ("4000::1", "outside the global unicast range"),
            ("::ffff:0:1", "IPv4-mapped"),
        ] {
            let got = why(ip).unwrap_or_else(|| panic!("{ip} must be refused"));
            assert!(
                got.contains(expected),
                "{ip}: {got:?} should say {expected:?}"
            );
        }
    }

    #[test]
    fn ipv4_carried_in_ipv6_is_judged_by_the_ipv4_address() {
        // Mapped and compatible: always refused, naming what they carry.
        assert_eq!(
            why("::ffff:127.0.0.1").unwrap(),
            "an IPv4-mapped IPv6 address of 127.0.0.1, a loopback address"
        );
        assert_eq!(
            why("::ffff:169.254.169.254").unwrap(),
            "an IPv4-mapped IPv6 address of 169.254.169.254, the cloud instance metadata address"
        );
        assert_eq!(
            why("::ffff:8.8.8.8").unwrap(),
            "an IPv4-mapped IPv6 address (of 8.8.8.8)"
        );
        assert!(why("::10.0.0.1").unwrap().contains("IPv4-compatible"));
        assert!(why("::8.8.8.8").unwrap().contains("IPv4-compatible"));
        // NAT64 and 6to4: refused when the carried address is.
        assert_eq!(
            why("64:ff9b::7f00:1").unwrap(),
            "a NAT64 address of 127.0.0.1, a loopback address"
        );
        assert_eq!(
            why("64:ff9b::a9fe:a9fe").unwrap(),
            "a NAT64 address of 169.254.169.254, the cloud instance metadata address"
        );
        assert_eq!(why("64:ff9b::808:808"), None, "NAT64 of 8.8.8.8");
        assert_eq!(
            why("2002:c0a8:0101::1").unwrap(),
            "a 6to4 address of 192.168.1.1, a private address (192.168.0.0/16)"
        );
        assert_eq!(
            why("2002:7f00:1::").unwrap(),
            "a 6to4 address of 127.0.0.1, a loopback address"
        );
        assert_eq!(why("2002:0808:0808::1"), None, "6to4 of 8.8.8.8");
    }

    #[test]
    fn public_ipv6_addresses_pass() {
        for ip in [
            "2606:4700::1111",
            "2606:4700:4700::1001",
            "2001:4860:4860::8888",
            "2620:fe::fe",
            "2a00:1450:4001:830::200e",
            "2001:db9::1",
            "2001:1::1",
            "2001:3::1",
            "2001:30::1",
            "3fff:1000::1",
            "2400:cb00::1",
        ] {
            assert_eq!(why(ip), None, "{ip} is public");
        }
    }

    #[test]
    fn prefixes_of_zero_and_full_length_match_as_they_should() {
        assert!(prefix_matches(5, 7, 0, 32));
        assert!(prefix_matches(5, 5, 32, 32));
        assert!(!prefix_matches(5, 4, 32, 32));
        assert!(prefix_matches(u128::MAX, u128::MAX, 200, 128));
    }
}
