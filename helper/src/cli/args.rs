//! Arguments several verb groups share: how a listing answers, and what `report`,
//! `record` and `ramp run` ask of the fleet's views.

use clap::Args;

use super::format::{self, Chosen};

use std::path::PathBuf;

use crate::report::DEFAULT_INTERVAL;

/// How a listing answers: `json`, the envelope the Puppet providers read, or `table` for
/// people; `--format` takes these or `auto` ([`Chosen`]). Errors of a verb that ran always
/// come as the JSON envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    /// The JSON envelope, like every verb.
    Json,
    /// An aligned table for people; text from clones is escaped.
    Table,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// auto: a table on a terminal, json otherwise; json: the JSON envelope; table: for
    /// people. Errors always come as the JSON envelope.
    #[arg(long, value_parser = format::parser::<ListFormat>(), default_value = format::AUTO)]
    pub format: Chosen<ListFormat>,
}

/// What `report` and `record` ask: the run interval, and the server and PuppetDB to ask.
#[derive(Debug, Clone, Args)]
pub struct ViewArgs {
    /// The agents' run interval in seconds; clones silent for more than twice this are listed.
    #[arg(long, default_value_t = DEFAULT_INTERVAL)]
    pub interval: u64,
    /// Puppet Server to ask for its view (https URL, or a host or host:port for https://host:8140).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// PuppetDB to ask for its command queue and, in a report, for the last runs of every
    /// load host's clones (https URL, or a host or host:port for https://host:8081); it
    /// takes a client certificate signed by the Puppet CA.
    #[arg(long, value_name = "URL")]
    pub puppetdb: Option<String>,
    #[command(flatten)]
    pub tls: TlsArgs,
}

/// The TLS files a verb asks Puppet Server or PuppetDB with; each defaults to the host
/// agent's.
#[derive(Debug, Clone, Args)]
pub struct TlsArgs {
    /// CA certificate to verify the server and PuppetDB with; default: the host agent's
    /// (/var/lib/puppet/ssl/certs/ca.pem, else /etc/puppetlabs/puppet/ssl/certs/ca.pem).
    #[arg(long, value_name = "PATH")]
    pub ca_cert: Option<PathBuf>,
    /// Client certificate for PuppetDB (PEM); default: the host agent's own, the one key
    /// in its ssldir's private_keys/ and the certificate of that name.
    #[arg(long, value_name = "PATH", requires = "client_key")]
    pub client_cert: Option<PathBuf>,
    /// The private key of --client-cert (PEM).
    #[arg(long, value_name = "PATH", requires = "client_cert")]
    pub client_key: Option<PathBuf>,
}

impl TlsArgs {
    /// The client certificate given, with its key.
    pub fn client(&self) -> Option<crate::report::https::ClientIdentity> {
        self.client_cert
            .clone()
            .zip(self.client_key.clone())
            .map(|(cert, key)| crate::report::https::ClientIdentity { cert, key })
    }

    /// Whether any of them is given.
    pub fn any(&self) -> bool {
        self.ca_cert.is_some() || self.client_cert.is_some() || self.client_key.is_some()
    }
}

impl ViewArgs {
    pub fn into_request(self) -> crate::report::ReportRequest {
        crate::report::ReportRequest {
            interval: self.interval,
            server: self.server,
            client: self.tls.client(),
            ca_cert: self.tls.ca_cert,
            puppetdb: self.puppetdb,
        }
    }
}
