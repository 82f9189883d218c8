//! The server's endpoints by one short name, whoever names them: Puppet Server's HTTP
//! metrics by route id (`puppet-v3-catalog-/*/`), its access log by path
//! (`/puppet/v3/catalog/c1.example?environment=production`).
//!
//! The names are a fixed list: what the server under test or a line of its log says can
//! only pick one of them, so however many routes or paths it makes up, what is kept per
//! endpoint stays bounded.

/// The endpoints of the `puppet/v3` API an agent run uses, and the others Puppet Server
/// serves there. A route or path of none of them is [`OTHER`].
pub const PUPPET_V3: &[&str] = &[
    "catalog",
    "node",
    "facts",
    "file_metadata",
    "file_metadatas",
    "file_content",
    "static_file_content",
    "file_bucket_file",
    "report",
    "environment_classes",
    "environment_modules",
    "environment_transports",
    "environments",
    "environment",
    "tasks",
    "plans",
    "compile",
];

/// The certificate authority's API (`/puppet-ca/v1/...`), as one endpoint.
pub const CA: &str = "ca";
/// The status API (`/status/v1/...`), which the recorder itself asks.
pub const STATUS: &str = "status";
/// Every other route or path.
pub const OTHER: &str = "other";

/// What an agent's run costs the server, in the order of a run: the endpoints the page
/// and the tables show first.
pub const OF_A_RUN: &[&str] = &[
    "node",
    "file_metadatas",
    "file_metadata",
    "file_content",
    "catalog",
    "report",
];

fn known(name: &str) -> &'static str {
    PUPPET_V3
        .iter()
        .find(|n| **n == name)
        .copied()
        .unwrap_or(OTHER)
}

/// The endpoint of one of Puppet Server's HTTP metrics route ids: `puppet-v3-<name>-/*/`
/// or `puppet-v3-<name>` (`other` is its own); `None` for `total`, which is every route.
pub fn of_route_id(route_id: &str) -> Option<&'static str> {
    if route_id == "total" {
        return None;
    }
    let Some(rest) = route_id.strip_prefix("puppet-v3-") else {
        return Some(OTHER);
    };
    let name = rest.strip_suffix("-/*/").unwrap_or(rest);
    Some(known(name))
}

/// The endpoint of a request's path (its query, if any, is not looked at).
pub fn of_path(path: &str) -> &'static str {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    if let Some(rest) = path.strip_prefix("/puppet/v3/") {
        known(rest.split('/').next().unwrap_or_default())
    } else if path.starts_with("/puppet-ca/") {
        CA
    } else if path.starts_with("/status/") {
        STATUS
    } else {
        OTHER
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_ids_and_paths_name_the_same_endpoints() {
        assert_eq!(of_route_id("puppet-v3-catalog-/*/"), Some("catalog"));
        assert_eq!(of_route_id("puppet-v3-environments"), Some("environments"));
        assert_eq!(
            of_route_id("puppet-v3-tasks-:module-name-:task-name"),
            Some(OTHER)
        );
        assert_eq!(of_route_id("puppet-v4-catalog"), Some(OTHER));
        assert_eq!(of_route_id("other"), Some(OTHER));
        assert_eq!(of_route_id("total"), None);
        assert_eq!(
            of_path("/puppet/v3/catalog/c1.example?environment=production"),
            "catalog"
        );
        assert_eq!(
            of_path("/puppet/v3/file_metadatas/plugins?x=y"),
            "file_metadatas"
        );
        assert_eq!(of_path("/puppet/v3/report/c1"), "report");
        assert_eq!(of_path("/puppet-ca/v1/certificate/ca"), CA);
        assert_eq!(of_path("/status/v1/services?level=debug"), STATUS);
        // What a client makes up picks no new name.
        assert_eq!(of_path("/puppet/v3/made-up-endpoint-1234/x"), OTHER);
        assert_eq!(of_path("/puppet/v3"), OTHER);
        assert_eq!(of_path("x"), OTHER);
        for name in OF_A_RUN {
            assert!(PUPPET_V3.contains(name), "{name}");
        }
    }
}
