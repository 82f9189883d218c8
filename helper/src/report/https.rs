//! The report's one HTTP client: a bounded GET over TLS verified against the Puppet CA
//! only, with the host agent's certificate as the client's where the service asks for one
//! (PuppetDB does; Puppet Server's status API does not).
//!
//! The services asked are the ones under test, so their answers are not trusted to be
//! small, quick or where they say: every answer is read up to the limit its caller gives
//! (what that answer really is, with room), every request ends by the report's one
//! [`Deadline`], and a redirect is never followed (the helper runs as root, every few
//! seconds in the recorder: a server under test must not send it to any other place).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::report::deadline::{Deadline, RequestTimeout};
use crate::sys::confined::HostFile;

/// The whole request, connecting included, gives up after this long (or sooner, when
/// the report's deadline is nearer).
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a redirect's `Location` an error quotes.
const MAX_LOCATION_SHOWN: usize = 200;

/// The most read of a PEM file (a CA certificate, a client certificate or its key): a
/// Puppet CA's bundle is a few KiB, every public root CA together about 200 KiB.
pub const MAX_PEM_BYTES: u64 = 1024 * 1024;

/// Where the host's own agent keeps its SSL files: Debian's and Ubuntu's `puppet-agent`
/// package first, then the AIO agent's (Puppet, OpenVox).
pub const AGENT_SSLDIRS: [&str; 2] = ["/var/lib/puppet/ssl", "/etc/puppetlabs/puppet/ssl"];

/// A client certificate and its key, as host paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The host agent's CA certificate: `certs/ca.pem` in the first agent SSL directory that
/// has one.
pub fn agent_ca_cert(exists: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    AGENT_SSLDIRS
        .iter()
        .map(|dir| Path::new(dir).join("certs/ca.pem"))
        .find(|p| exists(p))
}

/// A CA certificate as the answer shows it and where the helper opens it.
pub struct CaCert {
    pub shown: PathBuf,
    pub open: PathBuf,
}

/// The CA to verify `service` against: the one given (opened as given), else the host
/// agent's (found and opened through `host_path`), else an error naming what was tried.
pub fn ca_cert(
    given: Option<&Path>,
    service: &str,
    host_path: impl Fn(&Path) -> PathBuf,
) -> Result<CaCert, String> {
    if let Some(path) = given {
        return Ok(CaCert {
            shown: path.to_owned(),
            open: path.to_owned(),
        });
    }
    match agent_ca_cert(|p| host_path(p).exists()) {
        Some(found) => Ok(CaCert {
            open: host_path(&found),
            shown: found,
        }),
        None => Err(format!(
            "no CA certificate to verify {service} with: none of {} exists; give --ca-cert",
            AGENT_SSLDIRS
                .iter()
                .map(|dir| format!("{dir}/certs/ca.pem"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The host agent's own certificate: the first agent SSL directory that holds exactly one
/// private key (`private_keys/<certname>.pem`) and the certificate of the same name.
/// `list` gives a directory's file names (host paths are mapped by the caller).
pub fn agent_identity(
    exists: impl Fn(&Path) -> bool,
    list: impl Fn(&Path) -> Vec<String>,
) -> Result<ClientIdentity, String> {
    for dir in AGENT_SSLDIRS {
        let keys_dir = Path::new(dir).join("private_keys");
        let keys: Vec<String> = list(&keys_dir)
            .into_iter()
            .filter(|name| name.ends_with(".pem"))
            .collect();
        match keys.as_slice() {
            [] => continue,
            [key] => {
                let cert = Path::new(dir).join("certs").join(key);
                if !exists(&cert) {
                    return Err(format!(
                        "{} has no certificate for the key {}; give --client-cert and --client-key",
                        Path::new(dir).join("certs").display(),
                        keys_dir.join(key).display()
                    ));
                }
                return Ok(ClientIdentity {
                    cert,
                    key: keys_dir.join(key),
                });
            }
            _ => {
                return Err(format!(
                    "{} holds {} keys, so which one is the host's is not clear; give --client-cert and --client-key",
                    keys_dir.display(),
                    keys.len()
                ))
            }
        }
    }
    Err(format!(
        "no host agent certificate: none of {} holds a private key; give --client-cert and --client-key",
        AGENT_SSLDIRS
            .iter()
            .map(|dir| format!("{dir}/private_keys"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The PEM file at `path`, read as a caller's [`HostFile`] (the path is the caller's, and
/// the report task passes it on as root): never through a symlink, a regular file only, at
/// most [`MAX_PEM_BYTES`]. `what` names the file in the error.
fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    HostFile::at(path)
        .and_then(|file| file.read(MAX_PEM_BYTES))
        .map_err(|e| format!("cannot read the {what} {}: {e}", path.display()))?
        .ok_or_else(|| format!("the {what} {} does not exist", path.display()))
}

/// What is wrong with a PEM file, in words of the format only: the parser's own messages
/// quote the line or the marker it stopped at, and the file may be anything the caller
/// named (a secret included).
fn pem_problem(error: &ureq::Error) -> &'static str {
    match error {
        ureq::Error::Pem(_) => {
            "it is not valid PEM (a section is malformed, unterminated or not base64)"
        }
        // Fixed words of ureq's own ("No pem encoded private key found").
        ureq::Error::Tls(words) => words,
        _ => "it holds no usable PEM item",
    }
}

/// Every certificate in the PEM file at `path` (keys and other sections skipped); none is
/// an error, `what` naming the file in it.
fn certificates(path: &Path, what: &str) -> Result<Vec<ureq::tls::Certificate<'static>>, String> {
    let pem = read_pem(path, what)?;
    let certs = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(Ok(c)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            format!(
                "cannot parse the {what} {}: {}",
                path.display(),
                pem_problem(&e)
            )
        })?;
    if certs.is_empty() {
        return Err(format!(
            "the {what} file {} holds no certificate",
            path.display()
        ));
    }
    Ok(certs)
}

/// GET `url`, verifying the service against the CA at `ca` (a path to open) and, with
/// `client`, presenting that certificate; the answer's body is read up to `max_body`
/// bytes, the whole exchange ends by `deadline`. Any HTTP status but a redirect is an
/// answer (a 503 carries the services' states in JSON); a redirect (3xx), which is not
/// followed, and a failed exchange are errors.
pub fn get(
    url: &str,
    ca: &Path,
    client: Option<&ClientIdentity>,
    deadline: &Deadline,
    max_body: u64,
) -> Result<(u16, String), String> {
    exchange("GET", url, ca, client, deadline, max_body, |agent| {
        agent.get(url).call()
    })
}

/// POST the JSON `body` to `url`, with the same verification, client certificate, limit
/// and deadline as [`get`]. PuppetDB's queries go this way: a query naming a fleet's
/// certnames outgrows what a server takes in a URL.
pub fn post_json(
    url: &str,
    body: &str,
    ca: &Path,
    client: Option<&ClientIdentity>,
    deadline: &Deadline,
    max_body: u64,
) -> Result<(u16, String), String> {
    exchange("POST", url, ca, client, deadline, max_body, |agent| {
        agent.post(url).content_type("application/json").send(body)
    })
}

/// One request `send` makes with the verified agent, within this request's share of
/// `deadline`, its answer read up to `max_body`: what GET and POST have in common.
fn exchange(
    method: &str,
    url: &str,
    ca: &Path,
    client: Option<&ClientIdentity>,
    deadline: &Deadline,
    max_body: u64,
    send: impl FnOnce(ureq::Agent) -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Result<(u16, String), String> {
    let timeout = deadline
        .request_timeout(HTTP_TIMEOUT)
        .map_err(|e| format!("{method} {url} {e}"))?;
    let response = send(agent(ca, client, timeout.limit)?)
        .map_err(|e| failed(method, url, "failed", e, timeout, deadline))?;
    answer(method, url, response, max_body, timeout, deadline)
}

/// A client that trusts the CA at `ca` alone, presents `client` when given, follows no
/// redirect, speaks https only and gives up after `timeout`.
fn agent(
    ca: &Path,
    client: Option<&ClientIdentity>,
    timeout: Duration,
) -> Result<ureq::Agent, String> {
    let certs = certificates(ca, "CA certificate")?;
    let mut tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::Rustls)
        .root_certs(ureq::tls::RootCerts::Specific(Arc::new(certs)));
    if let Some(identity) = client {
        tls = tls.client_cert(Some(client_cert(identity)?));
    }
    Ok(ureq::Agent::config_builder()
        .tls_config(tls.build())
        .timeout_global(Some(timeout))
        // With no redirect to follow, ureq hands the 3xx back as an answer, which
        // `answer` refuses, naming where it pointed.
        .max_redirects(0)
        .https_only(true)
        .http_status_as_error(false)
        .build()
        .into())
}

/// The error of an exchange that failed at `stage`; one that ran out of time says which
/// limit did.
fn failed(
    method: &str,
    url: &str,
    stage: &str,
    e: ureq::Error,
    timeout: RequestTimeout,
    deadline: &Deadline,
) -> String {
    match e {
        ureq::Error::Timeout(_) => format!(
            "{method} {url} {stage}: {}",
            timeout.explain(deadline.budget())
        ),
        ureq::Error::BodyExceedsLimit(limit) => format!(
            "{method} {url} answered with more than {limit} bytes, more than such an answer \
             ever holds; not read"
        ),
        e => format!("{method} {url} {stage}: {e}"),
    }
}

/// The status and the body (at most `max_body` bytes) of an answer; a redirect is an
/// error naming where it pointed.
fn answer(
    method: &str,
    url: &str,
    mut response: ureq::http::Response<ureq::Body>,
    max_body: u64,
    timeout: RequestTimeout,
    deadline: &Deadline,
) -> Result<(u16, String), String> {
    let status = response.status();
    if status.is_redirection() {
        return Err(redirect_refused(method, url, status.as_u16(), &response));
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(max_body)
        .read_to_string()
        .map_err(|e| {
            let stage = "failed while its answer was read";
            failed(method, url, stage, e, timeout, deadline)
        })?;
    Ok((status.as_u16(), body))
}

/// Why a redirect was not followed, with its `Location` as the server sent it, escaped
/// and shortened (the header's bytes are the server's).
fn redirect_refused<B>(
    method: &str,
    url: &str,
    status: u16,
    response: &ureq::http::Response<B>,
) -> String {
    let location = match response.headers().get(ureq::http::header::LOCATION) {
        Some(value) => {
            let text = String::from_utf8_lossy(value.as_bytes());
            let shown: String = text.chars().take(MAX_LOCATION_SHOWN).collect();
            let more = if text.chars().count() > MAX_LOCATION_SHOWN {
                "..."
            } else {
                ""
            };
            format!("to {shown:?}{more}")
        }
        None => "without a Location".to_owned(),
    };
    format!(
        "{method} {url} answered HTTP {status}, a redirect {location}; redirects are not \
         followed: give the service's own URL"
    )
}

fn client_cert(identity: &ClientIdentity) -> Result<ureq::tls::ClientCert, String> {
    let chain = certificates(&identity.cert, "client certificate")?;
    let key_pem = read_pem(&identity.key, "client key")?;
    let key = ureq::tls::PrivateKey::from_pem(&key_pem).map_err(|e| {
        format!(
            "cannot parse the client key {}: {}",
            identity.key.display(),
            pem_problem(&e)
        )
    })?;
    Ok(ureq::tls::ClientCert::new_with_certs(&chain, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sys::confined::testing::{fifo, within_seconds};

    /// What reading the CA certificate at `path` said, within ten seconds.
    fn ca_refused(path: PathBuf) -> String {
        within_seconds(10, move || certificates(&path, "CA certificate").map(drop)).unwrap_err()
    }

    #[test]
    fn a_ca_cert_from_dev_zero_is_refused_not_read() {
        let message = ca_refused(PathBuf::from("/dev/zero"));
        assert!(message.contains("a character device"), "{message}");
        assert!(message.contains("/dev/zero"), "{message}");
    }

    #[test]
    fn a_ca_cert_that_is_a_fifo_is_refused_without_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        fifo(&path);
        let message = ca_refused(path);
        assert!(message.contains("a FIFO"), "{message}");
    }

    #[test]
    fn a_client_key_behind_a_symlink_is_refused_and_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("other-service.key");
        std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\n").unwrap();
        let link = dir.path().join("load1.pem");
        std::os::unix::fs::symlink(&key, &link).unwrap();
        let message = within_seconds(10, move || read_pem(&link, "client key")).unwrap_err();
        assert!(message.contains("a symlink"), "{message}");
    }

    #[test]
    fn a_pem_larger_than_any_certificate_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        let mut big = include_str!("fixtures/ca.pem").to_owned();
        big.push_str(&"\n".repeat(MAX_PEM_BYTES as usize));
        std::fs::write(&path, big).unwrap();
        let message = ca_refused(path);
        assert!(
            message.contains(&format!("more than the {MAX_PEM_BYTES}")),
            "{message}"
        );
    }

    /// A caller who names a secret file as a PEM learns that it is no PEM, never a byte
    /// of it: a malformed section is described, not quoted.
    #[test]
    fn a_pem_error_never_echoes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = [
            "-----BEGIN hunter2 secret\n",
            "-----BEGIN hunter2-----\nAAAA\n",
            "-----BEGIN CERTIFICATE-----\nhunter2!!\n-----END CERTIFICATE-----\n",
        ];
        // "hunter2" as text, and as the bytes a debug print of it shows.
        let echoes = ["hunter2", "104, 117, 110, 116"];
        for (n, secret) in secrets.iter().enumerate() {
            let path = dir.path().join(format!("secret{n}"));
            std::fs::write(&path, secret).unwrap();
            let messages = [
                ca_refused(path.clone()),
                client_cert(&ClientIdentity {
                    cert: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                        .join("src/report/fixtures/ca.pem"),
                    key: path.clone(),
                })
                .map(drop)
                .unwrap_err(),
            ];
            for message in messages {
                assert!(message.contains("secret"), "names the file: {message}");
                for echo in echoes {
                    assert!(!message.contains(echo), "{secret:?} echoed: {message}");
                }
            }
        }
    }

    #[test]
    fn the_agents_ca_is_found_in_its_ssldir() {
        assert_eq!(
            agent_ca_cert(|p| p.starts_with("/etc/puppetlabs")),
            Some(PathBuf::from("/etc/puppetlabs/puppet/ssl/certs/ca.pem"))
        );
        assert_eq!(
            agent_ca_cert(|_| true),
            Some(PathBuf::from("/var/lib/puppet/ssl/certs/ca.pem"))
        );
        assert_eq!(agent_ca_cert(|_| false), None);
    }

    #[test]
    fn the_agents_identity_is_its_one_key_and_the_certificate_of_that_name() {
        let one = |dir: &Path| {
            if dir == Path::new("/etc/puppetlabs/puppet/ssl/private_keys") {
                vec!["load1.example.com.pem".to_owned()]
            } else {
                vec![]
            }
        };
        assert_eq!(
            agent_identity(|_| true, one),
            Ok(ClientIdentity {
                cert: "/etc/puppetlabs/puppet/ssl/certs/load1.example.com.pem".into(),
                key: "/etc/puppetlabs/puppet/ssl/private_keys/load1.example.com.pem".into(),
            })
        );
        let no_cert = agent_identity(|_| false, one).unwrap_err();
        assert!(no_cert.contains("--client-cert"), "{no_cert}");
        let two =
            agent_identity(|_| true, |_| vec!["a.pem".to_owned(), "b.pem".to_owned()]).unwrap_err();
        assert!(
            two.contains("2 keys") && two.contains("/var/lib/puppet/ssl/private_keys"),
            "{two}"
        );
        let none = agent_identity(|_| true, |_| vec!["README".to_owned()]).unwrap_err();
        assert!(
            none.contains(
                "/var/lib/puppet/ssl/private_keys, /etc/puppetlabs/puppet/ssl/private_keys"
            ),
            "{none}"
        );
    }
}
